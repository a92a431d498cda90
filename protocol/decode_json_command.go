package protocol

import "fmt"

// Hand-written JSON decoders for Command and the requests, run by
// DecodeCommands on input that json.Valid accepted. Keys match exactly (as
// in the reference server), unknown keys are skipped, null clears a field,
// and bytes fields keep the raw JSON value verbatim. They must decode the
// same as the encoding/json path (json.Unmarshal into *Command), which
// FuzzDecodeCommands checks.

// fieldError names the key whose value could not be decoded.
func fieldError(key []byte, err error) error {
	return fmt.Errorf("%s: %w", key, err)
}

func decodeCommandJSON(r *jsonReader, x *Command) error {
	return readObject(r, func(key []byte) error {
		switch string(key) {
		case "id":
			return setScalar(r, &x.Id, (*jsonReader).uint32)
		case "connect":
			return jsonMessage(r, &x.Connect, decodeConnectRequestJSON)
		case "subscribe":
			return jsonMessage(r, &x.Subscribe, decodeSubscribeRequestJSON)
		case "unsubscribe":
			return jsonMessage(r, &x.Unsubscribe, decodeUnsubscribeRequestJSON)
		case "publish":
			return jsonMessage(r, &x.Publish, decodePublishRequestJSON)
		case "presence":
			return jsonMessage(r, &x.Presence, decodePresenceRequestJSON)
		case "presence_stats":
			return jsonMessage(r, &x.PresenceStats, decodePresenceStatsRequestJSON)
		case "history":
			return jsonMessage(r, &x.History, decodeHistoryRequestJSON)
		case "ping":
			return jsonMessage(r, &x.Ping, decodeEmptyJSON)
		case "send":
			return jsonMessage(r, &x.Send, decodeSendRequestJSON)
		case "rpc":
			return jsonMessage(r, &x.Rpc, decodeRPCRequestJSON)
		case "refresh":
			return jsonMessage(r, &x.Refresh, decodeRefreshRequestJSON)
		case "sub_refresh":
			return jsonMessage(r, &x.SubRefresh, decodeSubRefreshRequestJSON)
		default:
			r.skip()
		}
		return nil
	})
}

// setScalar decodes a scalar into *p; null leaves *p as it is, as in
// encoding/json.
func setScalar[T any](r *jsonReader, p *T, read func(*jsonReader) (T, error)) error {
	if r.null() {
		return nil
	}
	v, err := read(r)
	if err != nil {
		return err
	}
	*p = v
	return nil
}

func readUint64(r *jsonReader) (uint64, error) { return r.uint(64) }
func readInt64(r *jsonReader) (int64, error)   { return r.int(64) }

// decodeEmptyJSON checks that a message without fields is an object.
func decodeEmptyJSON[T any](r *jsonReader, _ *T) error {
	if err := r.open(); err != nil {
		return err
	}
	for {
		_, ok, err := r.next()
		if err != nil || !ok {
			return err
		}
		r.skip()
	}
}

func decodeConnectRequestJSON(r *jsonReader, x *ConnectRequest) error {
	return readObject(r, func(key []byte) error {
		switch string(key) {
		case "token":
			return setScalar(r, &x.Token, (*jsonReader).string)
		case "data":
			x.Data = r.raw()
		case "subs":
			return jsonMessageMap(r, &x.Subs, decodeSubscribeRequestJSON)
		case "name":
			return setScalar(r, &x.Name, (*jsonReader).string)
		case "version":
			return setScalar(r, &x.Version, (*jsonReader).string)
		case "headers":
			return jsonStringMap(r, &x.Headers)
		case "flag":
			return setScalar(r, &x.Flag, readInt64)
		default:
			r.skip()
		}
		return nil
	})
}

func decodeSubscribeRequestJSON(r *jsonReader, x *SubscribeRequest) error {
	return readObject(r, func(key []byte) error {
		switch string(key) {
		case "channel":
			return setScalar(r, &x.Channel, (*jsonReader).string)
		case "token":
			return setScalar(r, &x.Token, (*jsonReader).string)
		case "recover":
			return setScalar(r, &x.Recover, (*jsonReader).bool)
		case "epoch":
			return setScalar(r, &x.Epoch, (*jsonReader).string)
		case "offset":
			return setScalar(r, &x.Offset, readUint64)
		case "data":
			x.Data = r.raw()
		case "positioned":
			return setScalar(r, &x.Positioned, (*jsonReader).bool)
		case "recoverable":
			return setScalar(r, &x.Recoverable, (*jsonReader).bool)
		case "join_leave":
			return setScalar(r, &x.JoinLeave, (*jsonReader).bool)
		case "delta":
			return setScalar(r, &x.Delta, (*jsonReader).string)
		case "tf":
			return jsonMessage(r, &x.Tf, decodeFilterNodeJSON)
		case "flag":
			return setScalar(r, &x.Flag, readInt64)
		case "type":
			return setScalar(r, &x.Type, (*jsonReader).int32)
		case "phase":
			return setScalar(r, &x.Phase, (*jsonReader).int32)
		case "cursor":
			return setScalar(r, &x.Cursor, (*jsonReader).string)
		case "limit":
			return setScalar(r, &x.Limit, (*jsonReader).int32)
		case "asc":
			return setScalar(r, &x.Asc, (*jsonReader).bool)
		default:
			r.skip()
		}
		return nil
	})
}

func decodeFilterNodeJSON(r *jsonReader, x *FilterNode) error {
	return readObject(r, func(key []byte) error {
		switch string(key) {
		case "op":
			return setScalar(r, &x.Op, (*jsonReader).string)
		case "key":
			return setScalar(r, &x.Key, (*jsonReader).string)
		case "cmp":
			return setScalar(r, &x.Cmp, (*jsonReader).string)
		case "val":
			return setScalar(r, &x.Val, (*jsonReader).string)
		case "vals":
			return jsonList(r, &x.Vals, func(r *jsonReader) (string, error) {
				if r.null() {
					return "", nil
				}
				return r.string()
			})
		case "nodes":
			return jsonList(r, &x.Nodes, func(r *jsonReader) (*FilterNode, error) {
				var n *FilterNode
				err := jsonMessage(r, &n, decodeFilterNodeJSON)
				return n, err
			})
		default:
			r.skip()
		}
		return nil
	})
}

// decodeChannelJSON decodes the requests whose only field is channel.
func decodeChannelJSON(r *jsonReader, channel *string) error {
	if err := r.open(); err != nil {
		return err
	}
	for {
		key, ok, err := r.next()
		if err != nil || !ok {
			return err
		}
		if string(key) != "channel" {
			r.skip()
			continue
		}
		if err := setScalar(r, channel, (*jsonReader).string); err != nil {
			return fieldError(key, err)
		}
	}
}

func decodeUnsubscribeRequestJSON(r *jsonReader, x *UnsubscribeRequest) error {
	return decodeChannelJSON(r, &x.Channel)
}

func decodePresenceRequestJSON(r *jsonReader, x *PresenceRequest) error {
	return decodeChannelJSON(r, &x.Channel)
}

func decodePresenceStatsRequestJSON(r *jsonReader, x *PresenceStatsRequest) error {
	return decodeChannelJSON(r, &x.Channel)
}

func decodePublishRequestJSON(r *jsonReader, x *PublishRequest) error {
	return readObject(r, func(key []byte) error {
		switch string(key) {
		case "channel":
			return setScalar(r, &x.Channel, (*jsonReader).string)
		case "data":
			x.Data = r.raw()
		case "type":
			return setScalar(r, &x.Type, (*jsonReader).int32)
		case "key":
			return setScalar(r, &x.Key, (*jsonReader).string)
		case "removed":
			return setScalar(r, &x.Removed, (*jsonReader).bool)
		default:
			r.skip()
		}
		return nil
	})
}

func decodeHistoryRequestJSON(r *jsonReader, x *HistoryRequest) error {
	return readObject(r, func(key []byte) error {
		switch string(key) {
		case "channel":
			return setScalar(r, &x.Channel, (*jsonReader).string)
		case "limit":
			return setScalar(r, &x.Limit, (*jsonReader).int32)
		case "since":
			return jsonMessage(r, &x.Since, decodeStreamPositionJSON)
		case "reverse":
			return setScalar(r, &x.Reverse, (*jsonReader).bool)
		default:
			r.skip()
		}
		return nil
	})
}

func decodeStreamPositionJSON(r *jsonReader, x *StreamPosition) error {
	return readObject(r, func(key []byte) error {
		switch string(key) {
		case "offset":
			return setScalar(r, &x.Offset, readUint64)
		case "epoch":
			return setScalar(r, &x.Epoch, (*jsonReader).string)
		default:
			r.skip()
		}
		return nil
	})
}

func decodeSendRequestJSON(r *jsonReader, x *SendRequest) error {
	if err := r.open(); err != nil {
		return err
	}
	for {
		key, ok, err := r.next()
		if err != nil || !ok {
			return err
		}
		if string(key) == "data" {
			x.Data = r.raw()
		} else {
			r.skip()
		}
	}
}

func decodeRPCRequestJSON(r *jsonReader, x *RPCRequest) error {
	return readObject(r, func(key []byte) error {
		switch string(key) {
		case "data":
			x.Data = r.raw()
		case "method":
			return setScalar(r, &x.Method, (*jsonReader).string)
		default:
			r.skip()
		}
		return nil
	})
}

func decodeRefreshRequestJSON(r *jsonReader, x *RefreshRequest) error {
	if err := r.open(); err != nil {
		return err
	}
	for {
		key, ok, err := r.next()
		if err != nil || !ok {
			return err
		}
		if string(key) != "token" {
			r.skip()
			continue
		}
		if err := setScalar(r, &x.Token, (*jsonReader).string); err != nil {
			return fieldError(key, err)
		}
	}
}

func decodeSubRefreshRequestJSON(r *jsonReader, x *SubRefreshRequest) error {
	return readObject(r, func(key []byte) error {
		switch string(key) {
		case "channel":
			return setScalar(r, &x.Channel, (*jsonReader).string)
		case "token":
			return setScalar(r, &x.Token, (*jsonReader).string)
		case "type":
			return setScalar(r, &x.Type, (*jsonReader).int32)
		case "track":
			return jsonList(r, &x.Track, func(r *jsonReader) (*TrackBatch, error) {
				var b *TrackBatch
				err := jsonMessage(r, &b, decodeTrackBatchJSON)
				return b, err
			})
		case "untrack":
			return jsonList(r, &x.Untrack, func(r *jsonReader) (string, error) {
				if r.null() {
					return "", nil
				}
				return r.string()
			})
		default:
			r.skip()
		}
		return nil
	})
}

func decodeTrackBatchJSON(r *jsonReader, x *TrackBatch) error {
	return readObject(r, func(key []byte) error {
		switch string(key) {
		case "signature":
			return setScalar(r, &x.Signature, (*jsonReader).string)
		case "items":
			return jsonList(r, &x.Items, func(r *jsonReader) (*KeyedItem, error) {
				var it *KeyedItem
				err := jsonMessage(r, &it, decodeKeyedItemJSON)
				return it, err
			})
		default:
			r.skip()
		}
		return nil
	})
}

func decodeKeyedItemJSON(r *jsonReader, x *KeyedItem) error {
	return readObject(r, func(key []byte) error {
		switch string(key) {
		case "key":
			return setScalar(r, &x.Key, (*jsonReader).string)
		case "version":
			return setScalar(r, &x.Version, readUint64)
		default:
			r.skip()
		}
		return nil
	})
}

// readObject reads one JSON object, calling field for each key with the
// reader at the key's value; field consumes the value. An error from field
// is reported with the key.
func readObject(r *jsonReader, field func(key []byte) error) error {
	if err := r.open(); err != nil {
		return err
	}
	for {
		key, ok, err := r.next()
		if err != nil || !ok {
			return err
		}
		if err := field(key); err != nil {
			return fieldError(key, err)
		}
	}
}
