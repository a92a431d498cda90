package proxy

import (
	"encoding/json"

	"github.com/heraldhq/herald/auth"
)

// The JSON shapes of Centrifugo's proxy (its proxy.proto in JSON form):
// raw JSON payloads go in data/info/meta, binary ones base64-encoded in
// b64data/b64info.

// baseRequest starts every request.
type baseRequest struct {
	Client    string `json:"client"`
	Transport string `json:"transport"`
	Protocol  string `json:"protocol"`
	Encoding  string `json:"encoding"`
}

type connectRequest struct {
	baseRequest
	Name    string          `json:"name,omitempty"`
	Version string          `json:"version,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
	B64Data string          `json:"b64data,omitempty"`
}

type refreshRequest struct {
	baseRequest
	User string          `json:"user"`
	Meta json.RawMessage `json:"meta,omitempty"`
}

type subscribeRequest struct {
	baseRequest
	User    string          `json:"user"`
	Channel string          `json:"channel"`
	Meta    json.RawMessage `json:"meta,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
	B64Data string          `json:"b64data,omitempty"`
}

type publishRequest struct {
	baseRequest
	User    string          `json:"user"`
	Channel string          `json:"channel"`
	Data    json.RawMessage `json:"data,omitempty"`
	B64Data string          `json:"b64data,omitempty"`
	Meta    json.RawMessage `json:"meta,omitempty"`
}

type subRefreshRequest struct {
	baseRequest
	User    string          `json:"user"`
	Channel string          `json:"channel"`
	Meta    json.RawMessage `json:"meta,omitempty"`
}

type rpcRequest struct {
	baseRequest
	User    string          `json:"user"`
	Method  string          `json:"method"`
	Data    json.RawMessage `json:"data,omitempty"`
	B64Data string          `json:"b64data,omitempty"`
	Meta    json.RawMessage `json:"meta,omitempty"`
}

// envelope is every response: one of result, error or disconnect.
type envelope[T any] struct {
	Result     *T              `json:"result"`
	Error      *wireError      `json:"error"`
	Disconnect *wireDisconnect `json:"disconnect"`
}

type wireError struct {
	Code      uint32 `json:"code"`
	Message   string `json:"message"`
	Temporary bool   `json:"temporary"`
}

type wireDisconnect struct {
	Code   uint32 `json:"code"`
	Reason string `json:"reason"`
}

type boolValue struct {
	Value bool `json:"value"`
}

type subscribeOverride struct {
	Presence           *boolValue `json:"presence"`
	JoinLeave          *boolValue `json:"join_leave"`
	ForceRecovery      *boolValue `json:"force_recovery"`
	ForcePositioning   *boolValue `json:"force_positioning"`
	ForcePushJoinLeave *boolValue `json:"force_push_join_leave"`
}

type subscribeOptions struct {
	ExpireAt int64              `json:"expire_at"`
	Info     json.RawMessage    `json:"info"`
	B64Info  string             `json:"b64info"`
	Data     json.RawMessage    `json:"data"`
	B64Data  string             `json:"b64data"`
	Override *subscribeOverride `json:"override"`
	// Allow is read from a subscribe result only.
	Allow []string `json:"allow"`
}

type connectResult struct {
	User     string                      `json:"user"`
	ExpireAt int64                       `json:"expire_at"`
	Info     json.RawMessage             `json:"info"`
	B64Info  string                      `json:"b64info"`
	Data     json.RawMessage             `json:"data"`
	B64Data  string                      `json:"b64data"`
	Channels []string                    `json:"channels"`
	Subs     map[string]subscribeOptions `json:"subs"`
	Meta     json.RawMessage             `json:"meta"`
	Caps     []auth.ChannelCaps          `json:"caps"`
}

type refreshResult struct {
	Expired  bool               `json:"expired"`
	ExpireAt int64              `json:"expire_at"`
	Info     json.RawMessage    `json:"info"`
	B64Info  string             `json:"b64info"`
	Caps     []auth.ChannelCaps `json:"caps"`
}

// subscribeResult is the subscribe proxy's result: the same fields as a
// connect result's per-channel subs.
type subscribeResult = subscribeOptions

type publishResult struct {
	Data        json.RawMessage `json:"data"`
	B64Data     string          `json:"b64data"`
	SkipHistory bool            `json:"skip_history"`
}

type subRefreshResult struct {
	Expired  bool            `json:"expired"`
	ExpireAt int64           `json:"expire_at"`
	Info     json.RawMessage `json:"info"`
	B64Info  string          `json:"b64info"`
}

type rpcResult struct {
	Data    json.RawMessage `json:"data"`
	B64Data string          `json:"b64data"`
}
