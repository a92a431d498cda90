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
	if err := r.open(); err != nil {
		return err
	}
	for {
		key, ok, err := r.next()
		if err != nil || !ok {
			return err
		}
		switch string(key) {
		case "id":
			err = setScalar(r, &x.Id, (*jsonReader).uint32)
		case "connect":
			err = jsonMessage(r, &x.Connect, decodeConnectRequestJSON)
		case "subscribe":
			err = jsonMessage(r, &x.Subscribe, decodeSubscribeRequestJSON)
		case "unsubscribe":
			err = jsonMessage(r, &x.Unsubscribe, decodeUnsubscribeRequestJSON)
		case "publish":
			err = jsonMessage(r, &x.Publish, decodePublishRequestJSON)
		case "presence":
			err = jsonMessage(r, &x.Presence, decodePresenceRequestJSON)
		case "presence_stats":
			err = jsonMessage(r, &x.PresenceStats, decodePresenceStatsRequestJSON)
		case "history":
			err = jsonMessage(r, &x.History, decodeHistoryRequestJSON)
		case "ping":
			err = jsonMessage(r, &x.Ping, decodeEmptyJSON)
		case "send":
			err = jsonMessage(r, &x.Send, decodeSendRequestJSON)
		case "rpc":
			err = jsonMessage(r, &x.Rpc, decodeRPCRequestJSON)
		case "refresh":
			err = jsonMessage(r, &x.Refresh, decodeRefreshRequestJSON)
		case "sub_refresh":
			err = jsonMessage(r, &x.SubRefresh, decodeSubRefreshRequestJSON)
		default:
			r.skip()
		}
		if err != nil {
			return fieldError(key, err)
		}
	}
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
	if err := r.open(); err != nil {
		return err
	}
	for {
		key, ok, err := r.next()
		if err != nil || !ok {
			return err
		}
		switch string(key) {
		case "token":
			err = setScalar(r, &x.Token, (*jsonReader).string)
		case "data":
			x.Data = r.raw()
		case "subs":
			err = jsonMessageMap(r, &x.Subs, decodeSubscribeRequestJSON)
		case "name":
			err = setScalar(r, &x.Name, (*jsonReader).string)
		case "version":
			err = setScalar(r, &x.Version, (*jsonReader).string)
		case "headers":
			err = jsonStringMap(r, &x.Headers)
		case "flag":
			err = setScalar(r, &x.Flag, readInt64)
		default:
			r.skip()
		}
		if err != nil {
			return fieldError(key, err)
		}
	}
}

func decodeSubscribeRequestJSON(r *jsonReader, x *SubscribeRequest) error {
	if err := r.open(); err != nil {
		return err
	}
	for {
		key, ok, err := r.next()
		if err != nil || !ok {
			return err
		}
		switch string(key) {
		case "channel":
			err = setScalar(r, &x.Channel, (*jsonReader).string)
		case "token":
			err = setScalar(r, &x.Token, (*jsonReader).string)
		case "recover":
			err = setScalar(r, &x.Recover, (*jsonReader).bool)
		case "epoch":
			err = setScalar(r, &x.Epoch, (*jsonReader).string)
		case "offset":
			err = setScalar(r, &x.Offset, readUint64)
		case "data":
			x.Data = r.raw()
		case "positioned":
			err = setScalar(r, &x.Positioned, (*jsonReader).bool)
		case "recoverable":
			err = setScalar(r, &x.Recoverable, (*jsonReader).bool)
		case "join_leave":
			err = setScalar(r, &x.JoinLeave, (*jsonReader).bool)
		case "delta":
			err = setScalar(r, &x.Delta, (*jsonReader).string)
		case "tf":
			err = jsonMessage(r, &x.Tf, decodeFilterNodeJSON)
		case "flag":
			err = setScalar(r, &x.Flag, readInt64)
		case "type":
			err = setScalar(r, &x.Type, (*jsonReader).int32)
		case "phase":
			err = setScalar(r, &x.Phase, (*jsonReader).int32)
		case "cursor":
			err = setScalar(r, &x.Cursor, (*jsonReader).string)
		case "limit":
			err = setScalar(r, &x.Limit, (*jsonReader).int32)
		case "asc":
			err = setScalar(r, &x.Asc, (*jsonReader).bool)
		default:
			r.skip()
		}
		if err != nil {
			return fieldError(key, err)
		}
	}
}

func decodeFilterNodeJSON(r *jsonReader, x *FilterNode) error {
	if err := r.open(); err != nil {
		return err
	}
	for {
		key, ok, err := r.next()
		if err != nil || !ok {
			return err
		}
		switch string(key) {
		case "op":
			err = setScalar(r, &x.Op, (*jsonReader).string)
		case "key":
			err = setScalar(r, &x.Key, (*jsonReader).string)
		case "cmp":
			err = setScalar(r, &x.Cmp, (*jsonReader).string)
		case "val":
			err = setScalar(r, &x.Val, (*jsonReader).string)
		case "vals":
			err = jsonList(r, &x.Vals, func(r *jsonReader) (string, error) {
				if r.null() {
					return "", nil
				}
				return r.string()
			})
		case "nodes":
			err = jsonList(r, &x.Nodes, func(r *jsonReader) (*FilterNode, error) {
				var n *FilterNode
				err := jsonMessage(r, &n, decodeFilterNodeJSON)
				return n, err
			})
		default:
			r.skip()
		}
		if err != nil {
			return fieldError(key, err)
		}
	}
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
	if err := r.open(); err != nil {
		return err
	}
	for {
		key, ok, err := r.next()
		if err != nil || !ok {
			return err
		}
		switch string(key) {
		case "channel":
			err = setScalar(r, &x.Channel, (*jsonReader).string)
		case "data":
			x.Data = r.raw()
		case "type":
			err = setScalar(r, &x.Type, (*jsonReader).int32)
		case "key":
			err = setScalar(r, &x.Key, (*jsonReader).string)
		case "removed":
			err = setScalar(r, &x.Removed, (*jsonReader).bool)
		default:
			r.skip()
		}
		if err != nil {
			return fieldError(key, err)
		}
	}
}

func decodeHistoryRequestJSON(r *jsonReader, x *HistoryRequest) error {
	if err := r.open(); err != nil {
		return err
	}
	for {
		key, ok, err := r.next()
		if err != nil || !ok {
			return err
		}
		switch string(key) {
		case "channel":
			err = setScalar(r, &x.Channel, (*jsonReader).string)
		case "limit":
			err = setScalar(r, &x.Limit, (*jsonReader).int32)
		case "since":
			err = jsonMessage(r, &x.Since, decodeStreamPositionJSON)
		case "reverse":
			err = setScalar(r, &x.Reverse, (*jsonReader).bool)
		default:
			r.skip()
		}
		if err != nil {
			return fieldError(key, err)
		}
	}
}

func decodeStreamPositionJSON(r *jsonReader, x *StreamPosition) error {
	if err := r.open(); err != nil {
		return err
	}
	for {
		key, ok, err := r.next()
		if err != nil || !ok {
			return err
		}
		switch string(key) {
		case "offset":
			err = setScalar(r, &x.Offset, readUint64)
		case "epoch":
			err = setScalar(r, &x.Epoch, (*jsonReader).string)
		default:
			r.skip()
		}
		if err != nil {
			return fieldError(key, err)
		}
	}
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
	if err := r.open(); err != nil {
		return err
	}
	for {
		key, ok, err := r.next()
		if err != nil || !ok {
			return err
		}
		switch string(key) {
		case "data":
			x.Data = r.raw()
		case "method":
			err = setScalar(r, &x.Method, (*jsonReader).string)
		default:
			r.skip()
		}
		if err != nil {
			return fieldError(key, err)
		}
	}
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
	if err := r.open(); err != nil {
		return err
	}
	for {
		key, ok, err := r.next()
		if err != nil || !ok {
			return err
		}
		switch string(key) {
		case "channel":
			err = setScalar(r, &x.Channel, (*jsonReader).string)
		case "token":
			err = setScalar(r, &x.Token, (*jsonReader).string)
		default:
			r.skip()
		}
		if err != nil {
			return fieldError(key, err)
		}
	}
}
