package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// Client kinds (PoolConfig.Client): how much reading a connection costs
// the load tool.
const (
	// ClientLight reads every connection of a worker from one epoll
	// goroutine per core and parses publications in place: the cheapest
	// client, so that the load tool takes little CPU from the server.
	ClientLight = "light"
	// ClientHeavy gives each connection a goroutine of its own that reads
	// its frames through a buffered reader into a reused buffer and
	// decodes all of every message into reused structs, as a Go client
	// with generated decoders does: replies and pushes with a
	// reflection-free JSON reader (JSON) or the generated Protobuf decoder
	// of the protocol package, and each publication's data with the same
	// JSON reader. It answers pings; a frame's publications reach the
	// tally together, stamped once.
	ClientHeavy = "heavy"
	// ClientSDK makes each connection a centrifuge-go client (the
	// Centrifugo Go SDK) with a subscription per channel; publication data
	// is decoded with encoding/json in the subscription's handler. The SDK
	// brings the Centrifugo protocol's generated types, which register the
	// same Protobuf file as this project's protocol package, so it is only
	// in a binary built with -tags benchsdk and the registry's conflict
	// policy set to warn (sdk.go says how).
	ClientSDK = "sdk"
)

// ParseClientKind checks a --client value ("" is ClientLight).
func ParseClientKind(s string) (string, error) {
	switch s {
	case "", ClientLight:
		return ClientLight, nil
	case ClientHeavy, ClientSDK:
		return s, nil
	}
	return "", fmt.Errorf("client %q: want light, heavy or sdk", s)
}

// benchPayload is a publication's data (AppendPayload) decoded into a
// struct, as an application would decode its messages.
type benchPayload struct {
	K int    `json:"k"`
	N int    `json:"n"`
	Q int    `json:"q"`
	T int64  `json:"t"`
	P string `json:"p"`
}

// decodePayload decodes data with encoding/json; ok is false when it is
// not a payload of this tool.
func decodePayload(data []byte) (Message, bool) {
	var b benchPayload
	if err := json.Unmarshal(data, &b); err != nil || b.K < 0 || b.N <= 0 || b.Q < 0 || b.Q >= b.N || b.K > 1<<30 || b.N > 1<<30 {
		return Message{}, false
	}
	return Message{Step: b.K, N: b.N, Seq: b.Q, Intended: b.T}, true
}

// messageHandler is a Handler that takes publications already decoded,
// so that the sdk client does not parse their data twice.
type messageHandler interface {
	Message(shard, sub int, m Message, at int64)
}

// batchHandler is a Handler that takes the decoded publications of one
// frame at once, received at the same moment.
type batchHandler interface {
	Messages(shard, sub int, ms []Message, at int64)
}

// shardOf is the tally shard of an owned connection's subscriber.
func (p *Pool) shardOf(sub int) int { return sub % max(len(p.shards), 1) }

// deliverAll hands a frame's decoded publications to the batch handler,
// stamped now.
func (p *Pool) deliverAll(sub int, ms []Message) {
	p.batchHandler.Messages(p.shardOf(sub), sub, ms, p.clock.Now())
}

// deliver hands a publication an sdk connection read to the handler: decoded, and stamped after the decoding, when the application
// would see it.
func (p *Pool) deliver(sub int, channel string, data []byte) {
	if p.handler == nil {
		return
	}
	shard := p.shardOf(sub)
	m, ok := decodePayload(data)
	at := p.clock.Now()
	if mh, isMH := p.handler.(messageHandler); isMH && ok {
		mh.Message(shard, sub, m, at)
		return
	}
	p.handler.Publication(shard, sub, channel, data, at)
}

// ownedConn is a connection that reads on goroutines of its own (heavy,
// sdk); close closes it normally and returns when its reading ended. It
// may be called more than once, also after the connection was lost.
type ownedConn interface {
	close()
}

// ownedConns tracks a pool's owned connections so that Close reaches
// every one.
type ownedConns struct {
	mu     sync.Mutex
	closed bool
	conns  map[ownedConn]struct{}
}

// add registers c; false when the pool is closing (c must be closed).
func (o *ownedConns) add(c ownedConn) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return false
	}
	o.conns[c] = struct{}{}
	return true
}

func (o *ownedConns) remove(c ownedConn) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.conns, c)
}

// closeAll closes every registered connection, in parallel (each waits
// for its reader), and refuses later ones.
func (o *ownedConns) closeAll() {
	o.mu.Lock()
	o.closed = true
	conns := make([]ownedConn, 0, len(o.conns))
	for c := range o.conns {
		conns = append(conns, c)
	}
	o.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.close()
		}()
	}
	wg.Wait()
}

// ownedEnd accounts for the end of an owned connection exactly once.
type ownedEnd struct{ once sync.Once }

// finish takes c off the pool's books: closed by the pool (byPool) or lost
// (disconnected, with its cause).
func (e *ownedEnd) finish(p *Pool, c ownedConn, byPool bool, cause error) {
	e.once.Do(func() {
		p.owned.remove(c)
		p.current.Add(-1)
		if !byPool {
			p.disconnected.Add(1)
			p.noteError(cause)
		}
	})
}

// openOwned connects a heavy or sdk connection and counts the outcome.
func (p *Pool) openOwned(ctx context.Context, i, sub int) error {
	var (
		c     ownedConn
		start func()
		err   error
	)
	if p.cfg.Client == ClientSDK {
		c, start, err = p.dialSDK(ctx, i, sub)
	} else {
		c, start, err = p.dialHeavy(ctx, i, sub)
	}
	if err != nil {
		p.failed.Add(1)
		p.noteError(err)
		return err
	}
	p.connected.Add(1)
	p.current.Add(1)
	// Reading starts before the registration: a connection lost at once
	// takes itself off the books either way, and one the closing pool
	// refuses is closed (and counted) like the others.
	start()
	if !p.owned.add(c) {
		c.close()
		return errors.New("pool is closing")
	}
	return nil
}
