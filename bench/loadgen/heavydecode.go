package loadgen

import "github.com/heraldhq/herald/protocol"

// The heavy client's decoded reply. Each connection keeps one and decodes
// every reply into it, so that decoding allocates only while the buffers
// grow. Strings and bytes alias the frame when they can (data, raw
// infos), else a buffer of the field.
type (
	heavyInfo struct {
		user, client       []byte
		connInfo, chanInfo []byte
		userBuf, clientBuf []byte
	}
	heavyTag struct{ key, val []byte }
	heavyPub struct {
		data, prevData        []byte
		hasInfo               bool
		info                  heavyInfo
		offset, version       uint64
		tags                  []heavyTag
		tagBufs               [][]byte
		delta, removed        bool
		time, score           int64
		channel, key, epoch   []byte
		chanBuf, keyBuf, eBuf []byte
	}
	heavyPush struct {
		id               int64
		channel, chanBuf []byte
		// kind names the one push set: "pub", "join", "leave",
		// "unsubscribe", "message", "subscribe", "connect", "disconnect",
		// "refresh" ("" for none).
		kind      string
		pub       heavyPub
		info      heavyInfo // join, leave
		code      uint32    // unsubscribe, disconnect
		reason    []byte
		reasonBuf []byte
		reconnect bool
		data      []byte // message, subscribe, connect
		expires   bool   // refresh, connect
		ttl       uint32
		subscribe heavySubscribe
		connect   heavyConnect
	}
	heavyConnect struct {
		client, version, session, node []byte
		bufs                           [4][]byte
		data                           []byte
		subs                           int
		expires, pong                  bool
		ttl, ping                      uint32
		time                           int64
	}
	heavySubscribe struct {
		expires, recoverable, recovered  bool
		positioned, wasRecovering, delta bool
		ttl                              uint32
		epoch, epochBuf                  []byte
		offset                           uint64
		pubs                             []heavyPub
		npubs                            int
		data                             []byte
	}
	heavyReply struct {
		id           uint32
		hasError     bool
		errCode      uint32
		errMessage   []byte
		errBuf       []byte
		errTemporary bool
		hasPush      bool
		push         heavyPush
		hasConnect   bool
		connect      heavyConnect
		hasSubscribe bool
		subscribe    heavySubscribe
		other        bool // another command's result, read and checked
	}
)

// decodeJSON decodes one reply of a JSON frame (one line).
func (r *heavyReply) decodeJSON(c *jsonCursor) error {
	r.id, r.hasError, r.hasPush, r.hasConnect, r.hasSubscribe, r.other = 0, false, false, false, false, false
	var more bool
	var key, kb []byte
	for c.object(&more, &key, &kb) {
		switch string(key) {
		case "id":
			r.id = uint32(c.uint(32))
		case "error":
			r.hasError = true
			r.errCode, r.errMessage, r.errTemporary = 0, nil, false
			var m bool
			var k []byte
			for c.object(&m, &k, &kb) {
				switch string(k) {
				case "code":
					r.errCode = uint32(c.uint(32))
				case "message":
					r.errMessage = c.str(&r.errBuf)
				case "temporary":
					r.errTemporary = c.bool()
				default:
					c.skip()
				}
			}
		case "push":
			r.hasPush = true
			r.push.decodeJSON(c, &kb)
		case "connect":
			r.hasConnect = true
			r.connect.decodeJSON(c, &kb)
		case "subscribe":
			r.hasSubscribe = true
			r.subscribe.decodeJSON(c, &kb)
		default:
			r.other = true
			c.skip()
		}
	}
	return c.end()
}

func (p *heavyPush) decodeJSON(c *jsonCursor, kb *[]byte) {
	p.id, p.channel, p.kind = 0, nil, ""
	var more bool
	var key []byte
	for c.object(&more, &key, kb) {
		switch string(key) {
		case "id":
			p.id = c.int(64)
		case "channel":
			p.channel = c.str(&p.chanBuf)
		case "pub":
			p.kind = "pub"
			p.pub.decodeJSON(c, kb)
		case "join", "leave":
			p.kind = "join"
			if string(key) == "leave" {
				p.kind = "leave"
			}
			var m bool
			var k []byte
			for c.object(&m, &k, kb) {
				if string(k) == "info" {
					p.info.decodeJSON(c, kb)
				} else {
					c.skip()
				}
			}
		case "unsubscribe", "disconnect":
			if string(key) == "unsubscribe" {
				p.kind = "unsubscribe"
			} else {
				p.kind = "disconnect"
			}
			p.code, p.reason, p.reconnect = 0, nil, false
			var m bool
			var k []byte
			for c.object(&m, &k, kb) {
				switch string(k) {
				case "code":
					p.code = uint32(c.uint(32))
				case "reason":
					p.reason = c.str(&p.reasonBuf)
				case "reconnect":
					p.reconnect = c.bool()
				default:
					c.skip()
				}
			}
		case "message":
			p.kind = "message"
			p.data = nil
			var m bool
			var k []byte
			for c.object(&m, &k, kb) {
				if string(k) == "data" {
					p.data = c.raw()
				} else {
					c.skip()
				}
			}
		case "subscribe":
			p.kind = "subscribe"
			p.subscribe.decodeJSON(c, kb)
		case "connect":
			p.kind = "connect"
			p.connect.decodeJSON(c, kb)
		case "refresh":
			p.kind = "refresh"
			p.expires, p.ttl = false, 0
			var m bool
			var k []byte
			for c.object(&m, &k, kb) {
				switch string(k) {
				case "expires":
					p.expires = c.bool()
				case "ttl":
					p.ttl = uint32(c.uint(32))
				default:
					c.skip()
				}
			}
		default:
			c.skip()
		}
	}
}

func (p *heavyPub) decodeJSON(c *jsonCursor, kb *[]byte) {
	p.data, p.prevData, p.hasInfo, p.offset, p.version = nil, nil, false, 0, 0
	p.tags, p.delta, p.removed, p.time, p.score = p.tags[:0], false, false, 0, 0
	p.channel, p.key, p.epoch = nil, nil, nil
	var more bool
	var key []byte
	for c.object(&more, &key, kb) {
		switch string(key) {
		case "data":
			p.data = c.raw()
		case "prev_data":
			p.prevData = c.raw()
		case "info":
			p.hasInfo = true
			p.info.decodeJSON(c, kb)
		case "offset":
			p.offset = c.uint(64)
		case "version":
			p.version = c.uint(64)
		case "tags":
			var m bool
			var k []byte
			for c.object(&m, &k, kb) {
				n := len(p.tags)
				for len(p.tagBufs) < 2*(n+1) {
					p.tagBufs = append(p.tagBufs, nil)
				}
				p.tagBufs[2*n] = append(p.tagBufs[2*n][:0], k...)
				p.tags = append(p.tags, heavyTag{key: p.tagBufs[2*n], val: c.str(&p.tagBufs[2*n+1])})
			}
		case "delta":
			p.delta = c.bool()
		case "removed":
			p.removed = c.bool()
		case "time":
			p.time = c.int(64)
		case "score":
			p.score = c.int(64)
		case "channel":
			p.channel = c.str(&p.chanBuf)
		case "key":
			p.key = c.str(&p.keyBuf)
		case "epoch":
			p.epoch = c.str(&p.eBuf)
		default:
			c.skip()
		}
	}
}

func (in *heavyInfo) decodeJSON(c *jsonCursor, kb *[]byte) {
	in.user, in.client, in.connInfo, in.chanInfo = nil, nil, nil, nil
	var more bool
	var key []byte
	for c.object(&more, &key, kb) {
		switch string(key) {
		case "user":
			in.user = c.str(&in.userBuf)
		case "client":
			in.client = c.str(&in.clientBuf)
		case "conn_info":
			in.connInfo = c.raw()
		case "chan_info":
			in.chanInfo = c.raw()
		default:
			c.skip()
		}
	}
}

func (r *heavyConnect) decodeJSON(c *jsonCursor, kb *[]byte) {
	*r = heavyConnect{bufs: r.bufs}
	var more bool
	var key []byte
	for c.object(&more, &key, kb) {
		switch string(key) {
		case "client":
			r.client = c.str(&r.bufs[0])
		case "version":
			r.version = c.str(&r.bufs[1])
		case "session":
			r.session = c.str(&r.bufs[2])
		case "node":
			r.node = c.str(&r.bufs[3])
		case "data":
			r.data = c.raw()
		case "subs":
			// Server-side subscriptions: each is a subscribe result.
			var m bool
			var k []byte
			var sub heavySubscribe
			for c.object(&m, &k, kb) {
				sub.decodeJSON(c, kb)
				r.subs++
			}
		case "expires":
			r.expires = c.bool()
		case "pong":
			r.pong = c.bool()
		case "ttl":
			r.ttl = uint32(c.uint(32))
		case "ping":
			r.ping = uint32(c.uint(32))
		case "time":
			r.time = c.int(64)
		default:
			c.skip()
		}
	}
}

func (r *heavySubscribe) decodeJSON(c *jsonCursor, kb *[]byte) {
	r.expires, r.recoverable, r.recovered, r.positioned, r.wasRecovering, r.delta = false, false, false, false, false, false
	r.ttl, r.epoch, r.offset, r.npubs, r.data = 0, nil, 0, 0, nil
	var more bool
	var key []byte
	for c.object(&more, &key, kb) {
		switch string(key) {
		case "expires":
			r.expires = c.bool()
		case "recoverable":
			r.recoverable = c.bool()
		case "recovered":
			r.recovered = c.bool()
		case "positioned":
			r.positioned = c.bool()
		case "was_recovering":
			r.wasRecovering = c.bool()
		case "delta":
			r.delta = c.bool()
		case "ttl":
			r.ttl = uint32(c.uint(32))
		case "epoch":
			r.epoch = c.str(&r.epochBuf)
		case "offset":
			r.offset = c.uint(64)
		case "data":
			r.data = c.raw()
		case "publications":
			var m bool
			for c.array(&m) {
				if r.npubs == len(r.pubs) {
					r.pubs = append(r.pubs, heavyPub{})
				}
				r.pubs[r.npubs].decodeJSON(c, kb)
				r.npubs++
			}
		default:
			c.skip()
		}
	}
}

// fromProto copies what the connection acts on from a Protobuf reply,
// which the generated decoder has already decoded whole.
func (r *heavyReply) fromProto(p *protocol.Reply) {
	r.id, r.hasError, r.hasPush, r.hasConnect, r.hasSubscribe, r.other = p.Id, p.Error != nil, p.Push != nil, p.Connect != nil, p.Subscribe != nil, false
	if p.Error != nil {
		r.errBuf = append(r.errBuf[:0], p.Error.Message...)
		r.errCode, r.errMessage, r.errTemporary = p.Error.Code, r.errBuf, p.Error.Temporary
	}
	if p.Connect != nil {
		r.connect.ping, r.connect.pong = p.Connect.Ping, p.Connect.Pong
	}
	if p.Subscribe != nil {
		r.subscribe.npubs = len(p.Subscribe.Publications)
	}
	if p.Push != nil {
		r.push.chanBuf = append(r.push.chanBuf[:0], p.Push.Channel...)
		r.push.channel, r.push.kind = r.push.chanBuf, ""
		switch {
		case p.Push.Pub != nil:
			r.push.kind, r.push.pub.data = "pub", p.Push.Pub.Data
		case p.Push.Disconnect != nil:
			r.push.reasonBuf = append(r.push.reasonBuf[:0], p.Push.Disconnect.Reason...)
			r.push.kind, r.push.code, r.push.reason = "disconnect", p.Push.Disconnect.Code, r.push.reasonBuf
		}
	}
}

// protoError is the error reply in the protocol's types, for setupError.
func (r *heavyReply) protoError() *protocol.Reply {
	return &protocol.Reply{Id: r.id, Error: &protocol.Error{Code: r.errCode, Message: string(r.errMessage), Temporary: r.errTemporary}}
}

// heavyPayload decodes a publication's data (AppendPayload's form) with
// the reused cursor, every field, as the application would.
type heavyPayload struct {
	c      jsonCursor
	pad    []byte // the padding string, decoded
	padBuf []byte // its unescaping buffer (pad may alias the data)
}

func (h *heavyPayload) decode(data []byte) (Message, bool) {
	c := &h.c
	c.reset(data)
	var b benchPayload
	var more, seen bool
	var key, kb []byte
	for c.object(&more, &key, &kb) {
		seen = true
		switch string(key) {
		case "k":
			b.K = int(c.int(32))
		case "n":
			b.N = int(c.int(32))
		case "q":
			b.Q = int(c.int(32))
		case "t":
			b.T = c.int(64)
		case "p":
			h.pad = c.str(&h.padBuf)
		default:
			c.skip()
		}
	}
	if c.end() != nil || !seen || b.K < 0 || b.N <= 0 || b.Q < 0 || b.Q >= b.N || b.K > 1<<30 || b.N > 1<<30 {
		return Message{}, false
	}
	return Message{Step: b.K, N: b.N, Seq: b.Q, Intended: b.T}, true
}
