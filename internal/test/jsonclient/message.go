package jsonclient

import (
	"encoding/json"
	"fmt"
)

// Message is one reply or push as Conn decodes it, with the fields tests
// look at.
type Message struct {
	ID        uint32           `json:"id"`
	Error     *Error           `json:"error"`
	Push      *Push            `json:"push"`
	Connect   *ConnectResult   `json:"connect"`
	Subscribe *SubscribeResult `json:"subscribe"`
}

// Error is an error reply; it is also the error Conn.AwaitReply returns.
type Error struct {
	Code    uint32 `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return fmt.Sprintf("error %d: %s", e.Code, e.Message) }

// ConnectResult is the part of a connect result tests look at.
type ConnectResult struct {
	Client string `json:"client"`
}

// Push is an asynchronous message in a channel.
type Push struct {
	Channel     string       `json:"channel"`
	Pub         *Publication `json:"pub"`
	Join        *JoinLeave   `json:"join"`
	Leave       *JoinLeave   `json:"leave"`
	Unsubscribe *Unsubscribe `json:"unsubscribe"`
}

// Publication is a publication, pushed or recovered.
type Publication struct {
	Data   json.RawMessage `json:"data"`
	Offset uint64          `json:"offset"`
	// Key and Version: a shared poll or map publication's.
	Key     string `json:"key"`
	Version uint64 `json:"version"`
}

// JoinLeave is a join or leave push.
type JoinLeave struct {
	Info struct {
		User   string `json:"user"`
		Client string `json:"client"`
	} `json:"info"`
}

// Unsubscribe is the server's unsubscribe push.
type Unsubscribe struct {
	Code   uint32 `json:"code"`
	Reason string `json:"reason"`
}

// SubscribeRequest is a subscribe request; Recover asks for what was
// published after Offset in Epoch.
type SubscribeRequest struct {
	Channel string `json:"channel"`
	Recover bool   `json:"recover,omitempty"`
	Epoch   string `json:"epoch,omitempty"`
	Offset  uint64 `json:"offset,omitempty"`
}

// SubscribeResult is a subscribe result.
type SubscribeResult struct {
	Recoverable   bool          `json:"recoverable"`
	Positioned    bool          `json:"positioned"`
	Epoch         string        `json:"epoch"`
	Offset        uint64        `json:"offset"`
	WasRecovering bool          `json:"was_recovering"`
	Recovered     bool          `json:"recovered"`
	Publications  []Publication `json:"publications"`
}
