package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/heraldhq/herald/hub"
)

// maxText bounds a chat message, in characters.
const maxText = 500

// codeMethodNotFound is the protocol's own code for an unknown RPC method.
const codeMethodNotFound = 104

// onRPC is the hub's OnRPC handler: the page's calls to the server.
//
//	enter  — join the room (after subscribing to it); returns {"users": [...]}
//	say    — {"text": "..."}: publish a message under the caller's name
//	who    — returns {"users": [...]}, who is online
//
// It answers at once, on the client's command goroutine; a handler with
// slow work could hand reply to another goroutine instead.
func (r *room) onRPC(ctx context.Context, c *hub.Client, ev hub.RPCEvent, reply func(hub.RPCReply, error)) {
	switch ev.Method {
	case "enter":
		reply(r.enter(ctx, c))
	case "say":
		reply(r.say(ctx, c, ev.Data))
	case "who":
		reply(r.who(ctx))
	default:
		reply(hub.RPCReply{}, &hub.Error{Code: codeMethodNotFound, Message: fmt.Sprintf("unknown method %q", ev.Method)})
	}
}

// say publishes a user's message. It goes through the server rather than
// a client publish so that the server, not the page, names the author and
// checks the text.
func (r *room) say(ctx context.Context, c *hub.Client, data []byte) (hub.RPCReply, error) {
	var req struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(data, &req); err != nil {
		return hub.RPCReply{}, &hub.Error{Code: codeBadRequest, Message: `say takes {"text": "..."}`}
	}
	text := strings.TrimSpace(req.Text)
	if n := utf8.RuneCountInString(text); n == 0 || n > maxText {
		return hub.RPCReply{}, &hub.Error{Code: codeBadRequest, Message: fmt.Sprintf("a message is 1-%d characters", maxText)}
	}
	if !r.hasEntered(c) {
		return hub.RPCReply{}, &hub.Error{Code: codeNotInRoom, Message: "enter the room before speaking"}
	}
	if err := r.publish(ctx, message{Kind: "message", User: c.User(), Text: text}); err != nil {
		return hub.RPCReply{}, err
	}
	return hub.RPCReply{Data: []byte(`{}`)}, nil
}
