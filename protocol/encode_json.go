package protocol

import "strconv"

// Hand-written JSON encoders, one per message, fields in field-number order
// as Centrifugo writes them. Zero values are omitted except the fields the
// protocol always writes (ClientInfo.user/client, PresenceResult.presence,
// PresenceStatsResult.num_clients/num_users, HistoryResult.publications/
// epoch/offset); a set message field is written even when empty, which is
// how a successful result shows as {}.

// msgField appends key k and v encoded by enc, unless v is nil.
func msgField[T any](dst []byte, o jsonObject, k string, v *T, enc func([]byte, *T) []byte) []byte {
	if v == nil {
		return dst
	}
	return enc(o.key(dst, k), v)
}

// appendEmpty encodes a message without fields.
func appendEmpty[T any](dst []byte, _ *T) []byte {
	return append(dst, '{', '}')
}

func appendReplyJSON(dst []byte, x *Reply) []byte {
	dst, o := openObject(dst)
	dst = o.uint(dst, "id", uint64(x.Id))
	dst = msgField(dst, o, "error", x.Error, appendErrorJSON)
	dst = msgField(dst, o, "push", x.Push, appendPushJSON)
	dst = msgField(dst, o, "connect", x.Connect, appendConnectResultJSON)
	dst = msgField(dst, o, "subscribe", x.Subscribe, appendSubscribeResultJSON)
	dst = msgField(dst, o, "unsubscribe", x.Unsubscribe, appendEmpty)
	dst = msgField(dst, o, "publish", x.Publish, appendEmpty)
	dst = msgField(dst, o, "presence", x.Presence, appendPresenceResultJSON)
	dst = msgField(dst, o, "presence_stats", x.PresenceStats, appendPresenceStatsResultJSON)
	dst = msgField(dst, o, "history", x.History, appendHistoryResultJSON)
	dst = msgField(dst, o, "ping", x.Ping, appendEmpty)
	dst = msgField(dst, o, "rpc", x.Rpc, appendRPCResultJSON)
	dst = msgField(dst, o, "refresh", x.Refresh, appendRefreshResultJSON)
	dst = msgField(dst, o, "sub_refresh", x.SubRefresh, appendSubRefreshResultJSON)
	return append(dst, '}')
}

func appendErrorJSON(dst []byte, x *Error) []byte {
	dst, o := openObject(dst)
	dst = o.uint(dst, "code", uint64(x.Code))
	dst = o.string(dst, "message", x.Message)
	dst = o.bool(dst, "temporary", x.Temporary)
	return append(dst, '}')
}

func appendPushJSON(dst []byte, x *Push) []byte {
	dst, o := openObject(dst)
	dst = o.int(dst, "id", x.Id)
	dst = o.string(dst, "channel", x.Channel)
	dst = msgField(dst, o, "pub", x.Pub, appendPublicationJSON)
	dst = msgField(dst, o, "join", x.Join, appendJoinJSON)
	dst = msgField(dst, o, "leave", x.Leave, appendLeaveJSON)
	dst = msgField(dst, o, "unsubscribe", x.Unsubscribe, appendUnsubscribeJSON)
	dst = msgField(dst, o, "message", x.Message, appendMessageJSON)
	dst = msgField(dst, o, "subscribe", x.Subscribe, appendSubscribeJSON)
	dst = msgField(dst, o, "connect", x.Connect, appendConnectJSON)
	dst = msgField(dst, o, "disconnect", x.Disconnect, appendDisconnectJSON)
	dst = msgField(dst, o, "refresh", x.Refresh, appendRefreshJSON)
	return append(dst, '}')
}

func appendClientInfoJSON(dst []byte, x *ClientInfo) []byte {
	dst, o := openObject(dst)
	dst = appendString(o.key(dst, "user"), x.User)
	dst = appendString(o.key(dst, "client"), x.Client)
	dst = o.raw(dst, "conn_info", x.ConnInfo)
	dst = o.raw(dst, "chan_info", x.ChanInfo)
	return append(dst, '}')
}

func appendPublicationJSON(dst []byte, x *Publication) []byte {
	dst, o := openObject(dst)
	dst = o.raw(dst, "data", x.Data)
	dst = msgField(dst, o, "info", x.Info, appendClientInfoJSON)
	dst = o.uint(dst, "offset", x.Offset)
	if len(x.Tags) > 0 {
		dst = appendStringMap(o.key(dst, "tags"), x.Tags)
	}
	dst = o.bool(dst, "delta", x.Delta)
	dst = o.int(dst, "time", x.Time)
	dst = o.string(dst, "channel", x.Channel)
	dst = o.string(dst, "key", x.Key)
	dst = o.bool(dst, "removed", x.Removed)
	dst = o.int(dst, "score", x.Score)
	dst = o.string(dst, "epoch", x.Epoch)
	dst = o.raw(dst, "prev_data", x.PrevData)
	dst = o.uint(dst, "version", x.Version)
	return append(dst, '}')
}

func appendJoinJSON(dst []byte, x *Join) []byte {
	dst, o := openObject(dst)
	dst = msgField(dst, o, "info", x.Info, appendClientInfoJSON)
	return append(dst, '}')
}

func appendLeaveJSON(dst []byte, x *Leave) []byte {
	dst, o := openObject(dst)
	dst = msgField(dst, o, "info", x.Info, appendClientInfoJSON)
	return append(dst, '}')
}

func appendUnsubscribeJSON(dst []byte, x *Unsubscribe) []byte {
	dst, o := openObject(dst)
	dst = o.uint(dst, "code", uint64(x.Code))
	dst = o.string(dst, "reason", x.Reason)
	return append(dst, '}')
}

func appendSubscribeJSON(dst []byte, x *Subscribe) []byte {
	dst, o := openObject(dst)
	dst = o.bool(dst, "recoverable", x.Recoverable)
	dst = o.string(dst, "epoch", x.Epoch)
	dst = o.uint(dst, "offset", x.Offset)
	dst = o.bool(dst, "positioned", x.Positioned)
	dst = o.raw(dst, "data", x.Data)
	return append(dst, '}')
}

func appendMessageJSON(dst []byte, x *Message) []byte {
	dst, o := openObject(dst)
	dst = o.raw(dst, "data", x.Data)
	return append(dst, '}')
}

func appendConnectJSON(dst []byte, x *Connect) []byte {
	dst, o := openObject(dst)
	dst = o.string(dst, "client", x.Client)
	dst = o.string(dst, "version", x.Version)
	dst = o.raw(dst, "data", x.Data)
	if len(x.Subs) > 0 {
		dst = appendMessageMap(o.key(dst, "subs"), x.Subs, appendSubscribeResultJSON)
	}
	dst = o.bool(dst, "expires", x.Expires)
	dst = o.uint(dst, "ttl", uint64(x.Ttl))
	dst = o.uint(dst, "ping", uint64(x.Ping))
	dst = o.bool(dst, "pong", x.Pong)
	dst = o.string(dst, "session", x.Session)
	dst = o.string(dst, "node", x.Node)
	dst = o.int(dst, "time", x.Time)
	return append(dst, '}')
}

func appendDisconnectJSON(dst []byte, x *Disconnect) []byte {
	dst, o := openObject(dst)
	dst = o.uint(dst, "code", uint64(x.Code))
	dst = o.string(dst, "reason", x.Reason)
	dst = o.bool(dst, "reconnect", x.Reconnect)
	return append(dst, '}')
}

func appendRefreshJSON(dst []byte, x *Refresh) []byte {
	dst, o := openObject(dst)
	dst = o.bool(dst, "expires", x.Expires)
	dst = o.uint(dst, "ttl", uint64(x.Ttl))
	return append(dst, '}')
}

func appendConnectResultJSON(dst []byte, x *ConnectResult) []byte {
	dst, o := openObject(dst)
	dst = o.string(dst, "client", x.Client)
	dst = o.string(dst, "version", x.Version)
	dst = o.bool(dst, "expires", x.Expires)
	dst = o.uint(dst, "ttl", uint64(x.Ttl))
	dst = o.raw(dst, "data", x.Data)
	if len(x.Subs) > 0 {
		dst = appendMessageMap(o.key(dst, "subs"), x.Subs, appendSubscribeResultJSON)
	}
	dst = o.uint(dst, "ping", uint64(x.Ping))
	dst = o.bool(dst, "pong", x.Pong)
	dst = o.string(dst, "session", x.Session)
	dst = o.string(dst, "node", x.Node)
	dst = o.int(dst, "time", x.Time)
	dst = o.int(dst, "flag", x.Flag)
	return append(dst, '}')
}

func appendRefreshResultJSON(dst []byte, x *RefreshResult) []byte {
	dst, o := openObject(dst)
	dst = o.string(dst, "client", x.Client)
	dst = o.string(dst, "version", x.Version)
	dst = o.bool(dst, "expires", x.Expires)
	dst = o.uint(dst, "ttl", uint64(x.Ttl))
	return append(dst, '}')
}

func appendSubscribeResultJSON(dst []byte, x *SubscribeResult) []byte {
	dst, o := openObject(dst)
	dst = o.bool(dst, "expires", x.Expires)
	dst = o.uint(dst, "ttl", uint64(x.Ttl))
	dst = o.bool(dst, "recoverable", x.Recoverable)
	dst = o.string(dst, "epoch", x.Epoch)
	if len(x.Publications) > 0 {
		dst = appendMessages(o.key(dst, "publications"), x.Publications, appendPublicationJSON)
	}
	dst = o.bool(dst, "recovered", x.Recovered)
	dst = o.uint(dst, "offset", x.Offset)
	dst = o.bool(dst, "positioned", x.Positioned)
	dst = o.raw(dst, "data", x.Data)
	dst = o.bool(dst, "was_recovering", x.WasRecovering)
	dst = o.bool(dst, "delta", x.Delta)
	dst = o.int(dst, "id", x.Id)
	dst = o.int(dst, "type", int64(x.Type))
	dst = o.int(dst, "phase", int64(x.Phase))
	dst = o.string(dst, "cursor", x.Cursor)
	if len(x.State) > 0 {
		dst = appendMessages(o.key(dst, "state"), x.State, appendPublicationJSON)
	}
	dst = o.uint(dst, "publish_debounce", uint64(x.PublishDebounce))
	return append(dst, '}')
}

func appendSubRefreshResultJSON(dst []byte, x *SubRefreshResult) []byte {
	dst, o := openObject(dst)
	dst = o.bool(dst, "expires", x.Expires)
	dst = o.uint(dst, "ttl", uint64(x.Ttl))
	if len(x.Items) > 0 {
		dst = appendMessages(o.key(dst, "items"), x.Items, appendPublicationJSON)
	}
	return append(dst, '}')
}

func appendPresenceResultJSON(dst []byte, x *PresenceResult) []byte {
	dst, o := openObject(dst)
	dst = appendMessageMap(o.key(dst, "presence"), x.Presence, appendClientInfoJSON)
	return append(dst, '}')
}

func appendPresenceStatsResultJSON(dst []byte, x *PresenceStatsResult) []byte {
	dst, o := openObject(dst)
	dst = strconv.AppendUint(o.key(dst, "num_clients"), uint64(x.NumClients), 10)
	dst = strconv.AppendUint(o.key(dst, "num_users"), uint64(x.NumUsers), 10)
	return append(dst, '}')
}

func appendHistoryResultJSON(dst []byte, x *HistoryResult) []byte {
	dst, o := openObject(dst)
	dst = appendMessages(o.key(dst, "publications"), x.Publications, appendPublicationJSON)
	dst = appendString(o.key(dst, "epoch"), x.Epoch)
	dst = strconv.AppendUint(o.key(dst, "offset"), x.Offset, 10)
	return append(dst, '}')
}

func appendRPCResultJSON(dst []byte, x *RPCResult) []byte {
	dst, o := openObject(dst)
	dst = o.raw(dst, "data", x.Data)
	return append(dst, '}')
}

// Commands: the server never sends them, but Go clients and tests do.

func appendCommandJSON(dst []byte, x *Command) []byte {
	dst, o := openObject(dst)
	dst = o.uint(dst, "id", uint64(x.Id))
	dst = msgField(dst, o, "connect", x.Connect, appendConnectRequestJSON)
	dst = msgField(dst, o, "subscribe", x.Subscribe, appendSubscribeRequestJSON)
	dst = msgField(dst, o, "unsubscribe", x.Unsubscribe, appendUnsubscribeRequestJSON)
	dst = msgField(dst, o, "publish", x.Publish, appendPublishRequestJSON)
	dst = msgField(dst, o, "presence", x.Presence, appendPresenceRequestJSON)
	dst = msgField(dst, o, "presence_stats", x.PresenceStats, appendPresenceStatsRequestJSON)
	dst = msgField(dst, o, "history", x.History, appendHistoryRequestJSON)
	dst = msgField(dst, o, "ping", x.Ping, appendEmpty)
	dst = msgField(dst, o, "send", x.Send, appendSendRequestJSON)
	dst = msgField(dst, o, "rpc", x.Rpc, appendRPCRequestJSON)
	dst = msgField(dst, o, "refresh", x.Refresh, appendRefreshRequestJSON)
	dst = msgField(dst, o, "sub_refresh", x.SubRefresh, appendSubRefreshRequestJSON)
	return append(dst, '}')
}

func appendConnectRequestJSON(dst []byte, x *ConnectRequest) []byte {
	dst, o := openObject(dst)
	dst = o.string(dst, "token", x.Token)
	dst = o.raw(dst, "data", x.Data)
	if len(x.Subs) > 0 {
		dst = appendMessageMap(o.key(dst, "subs"), x.Subs, appendSubscribeRequestJSON)
	}
	dst = o.string(dst, "name", x.Name)
	dst = o.string(dst, "version", x.Version)
	if len(x.Headers) > 0 {
		dst = appendStringMap(o.key(dst, "headers"), x.Headers)
	}
	dst = o.int(dst, "flag", x.Flag)
	return append(dst, '}')
}

func appendSubscribeRequestJSON(dst []byte, x *SubscribeRequest) []byte {
	dst, o := openObject(dst)
	dst = o.string(dst, "channel", x.Channel)
	dst = o.string(dst, "token", x.Token)
	dst = o.bool(dst, "recover", x.Recover)
	dst = o.string(dst, "epoch", x.Epoch)
	dst = o.uint(dst, "offset", x.Offset)
	dst = o.raw(dst, "data", x.Data)
	dst = o.bool(dst, "positioned", x.Positioned)
	dst = o.bool(dst, "recoverable", x.Recoverable)
	dst = o.bool(dst, "join_leave", x.JoinLeave)
	dst = o.string(dst, "delta", x.Delta)
	dst = msgField(dst, o, "tf", x.Tf, appendFilterNodeJSON)
	dst = o.int(dst, "flag", x.Flag)
	dst = o.int(dst, "type", int64(x.Type))
	dst = o.int(dst, "phase", int64(x.Phase))
	dst = o.string(dst, "cursor", x.Cursor)
	dst = o.int(dst, "limit", int64(x.Limit))
	dst = o.bool(dst, "asc", x.Asc)
	return append(dst, '}')
}

func appendFilterNodeJSON(dst []byte, x *FilterNode) []byte {
	dst, o := openObject(dst)
	dst = o.string(dst, "op", x.Op)
	dst = o.string(dst, "key", x.Key)
	dst = o.string(dst, "cmp", x.Cmp)
	dst = o.string(dst, "val", x.Val)
	if len(x.Vals) > 0 {
		dst = appendStrings(o.key(dst, "vals"), x.Vals)
	}
	if len(x.Nodes) > 0 {
		dst = appendMessages(o.key(dst, "nodes"), x.Nodes, appendFilterNodeJSON)
	}
	return append(dst, '}')
}

func appendUnsubscribeRequestJSON(dst []byte, x *UnsubscribeRequest) []byte {
	dst, o := openObject(dst)
	dst = o.string(dst, "channel", x.Channel)
	return append(dst, '}')
}

func appendPublishRequestJSON(dst []byte, x *PublishRequest) []byte {
	dst, o := openObject(dst)
	dst = o.string(dst, "channel", x.Channel)
	dst = o.raw(dst, "data", x.Data)
	dst = o.int(dst, "type", int64(x.Type))
	dst = o.string(dst, "key", x.Key)
	dst = o.bool(dst, "removed", x.Removed)
	return append(dst, '}')
}

func appendPresenceRequestJSON(dst []byte, x *PresenceRequest) []byte {
	dst, o := openObject(dst)
	dst = o.string(dst, "channel", x.Channel)
	return append(dst, '}')
}

func appendPresenceStatsRequestJSON(dst []byte, x *PresenceStatsRequest) []byte {
	dst, o := openObject(dst)
	dst = o.string(dst, "channel", x.Channel)
	return append(dst, '}')
}

func appendHistoryRequestJSON(dst []byte, x *HistoryRequest) []byte {
	dst, o := openObject(dst)
	dst = o.string(dst, "channel", x.Channel)
	dst = o.int(dst, "limit", int64(x.Limit))
	dst = msgField(dst, o, "since", x.Since, appendStreamPositionJSON)
	dst = o.bool(dst, "reverse", x.Reverse)
	return append(dst, '}')
}

func appendStreamPositionJSON(dst []byte, x *StreamPosition) []byte {
	dst, o := openObject(dst)
	dst = o.uint(dst, "offset", x.Offset)
	dst = o.string(dst, "epoch", x.Epoch)
	return append(dst, '}')
}

func appendSendRequestJSON(dst []byte, x *SendRequest) []byte {
	dst, o := openObject(dst)
	dst = o.raw(dst, "data", x.Data)
	return append(dst, '}')
}

func appendRPCRequestJSON(dst []byte, x *RPCRequest) []byte {
	dst, o := openObject(dst)
	dst = o.raw(dst, "data", x.Data)
	dst = o.string(dst, "method", x.Method)
	return append(dst, '}')
}

func appendRefreshRequestJSON(dst []byte, x *RefreshRequest) []byte {
	dst, o := openObject(dst)
	dst = o.string(dst, "token", x.Token)
	return append(dst, '}')
}

func appendSubRefreshRequestJSON(dst []byte, x *SubRefreshRequest) []byte {
	dst, o := openObject(dst)
	dst = o.string(dst, "channel", x.Channel)
	dst = o.string(dst, "token", x.Token)
	dst = o.int(dst, "type", int64(x.Type))
	if len(x.Track) > 0 {
		dst = appendMessages(o.key(dst, "track"), x.Track, appendTrackBatchJSON)
	}
	if len(x.Untrack) > 0 {
		dst = appendStrings(o.key(dst, "untrack"), x.Untrack)
	}
	return append(dst, '}')
}

func appendTrackBatchJSON(dst []byte, x *TrackBatch) []byte {
	dst, o := openObject(dst)
	dst = o.string(dst, "signature", x.Signature)
	if len(x.Items) > 0 {
		dst = appendMessages(o.key(dst, "items"), x.Items, appendKeyedItemJSON)
	}
	return append(dst, '}')
}

func appendKeyedItemJSON(dst []byte, x *KeyedItem) []byte {
	dst, o := openObject(dst)
	dst = o.string(dst, "key", x.Key)
	dst = o.uint(dst, "version", x.Version)
	return append(dst, '}')
}
