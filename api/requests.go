package api

import "encoding/json"

// Request bodies, with the field names of Centrifugo's api.proto. Fields
// Herald does not act on are still declared, so that the handler can
// refuse or document them instead of dropping them unseen.

type publishRequest struct {
	Channel        string            `json:"channel"`
	Data           json.RawMessage   `json:"data"`
	B64Data        string            `json:"b64data"`
	SkipHistory    bool              `json:"skip_history"`
	Tags           map[string]string `json:"tags"`
	IdempotencyKey string            `json:"idempotency_key"`
	Delta          bool              `json:"delta"`
	Version        uint64            `json:"version"`
	VersionEpoch   string            `json:"version_epoch"`
}

type broadcastRequest struct {
	Channels       []string          `json:"channels"`
	Data           json.RawMessage   `json:"data"`
	B64Data        string            `json:"b64data"`
	SkipHistory    bool              `json:"skip_history"`
	Tags           map[string]string `json:"tags"`
	IdempotencyKey string            `json:"idempotency_key"`
	Delta          bool              `json:"delta"`
	Version        uint64            `json:"version"`
	VersionEpoch   string            `json:"version_epoch"`
}

type streamPosition struct {
	Offset uint64 `json:"offset"`
	Epoch  string `json:"epoch"`
}

type subscribeRequest struct {
	Channel      string          `json:"channel"`
	User         string          `json:"user"`
	ExpireAt     int64           `json:"expire_at"`
	Info         json.RawMessage `json:"info"`
	B64Info      string          `json:"b64info"`
	Client       string          `json:"client"`
	Data         json.RawMessage `json:"data"`
	B64Data      string          `json:"b64data"`
	RecoverSince *streamPosition `json:"recover_since"`
	Override     json.RawMessage `json:"override"`
	Session      string          `json:"session"`
}

type unsubscribeRequest struct {
	Channel string `json:"channel"`
	User    string `json:"user"`
	Client  string `json:"client"`
	Session string `json:"session"`
}

type disconnectObject struct {
	Code   uint32 `json:"code"`
	Reason string `json:"reason"`
}

type disconnectRequest struct {
	User       string            `json:"user"`
	Disconnect *disconnectObject `json:"disconnect"`
	Client     string            `json:"client"`
	Whitelist  []string          `json:"whitelist"`
	Session    string            `json:"session"`
}

type refreshRequest struct {
	User     string          `json:"user"`
	Client   string          `json:"client"`
	Expired  bool            `json:"expired"`
	ExpireAt int64           `json:"expire_at"`
	Info     json.RawMessage `json:"info"`
	Session  string          `json:"session"`
}

type channelRequest struct {
	Channel string `json:"channel"`
}

type historyRequest struct {
	Channel string          `json:"channel"`
	Limit   int32           `json:"limit"`
	Since   *streamPosition `json:"since"`
	Reverse bool            `json:"reverse"`
}

type channelsRequest struct {
	Pattern string `json:"pattern"`
}

type infoRequest struct{}

// connectionsRequest selects live connections across the cluster; Cursor
// is the previous page's next_cursor.
type connectionsRequest struct {
	User    string `json:"user"`
	Channel string `json:"channel"`
	Limit   int    `json:"limit"`
	Cursor  string `json:"cursor"`
}

type rpcRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

type batchRequest struct {
	// Commands are decoded one by one, so that a malformed command fails
	// only its own reply.
	Commands []json.RawMessage `json:"commands"`
	Parallel bool              `json:"parallel"`
}
