package api

import (
	"context"

	"github.com/heraldhq/herald/protocol"
)

// maxCloseReason is the most a WebSocket close frame's reason can hold.
const maxCloseReason = 123

// disconnect closes the user's connections on every node, or only the
// connection client; whitelisted client ids stay. Without a disconnect
// object the code is 3503 "force disconnect", as in Centrifugo.
func (a *handler) disconnect(ctx context.Context, req *disconnectRequest) (*emptyResult, *Error) {
	if e := checkTarget(req.User, req.Client, req.Session); e != nil {
		return nil, e
	}
	code := protocol.DisconnectForceNoReconnect
	reason := code.Reason()
	if d := req.Disconnect; d != nil {
		if d.Code < 3000 || d.Code > 4999 {
			return nil, badRequest("disconnect.code: want 3000–4999, got %d", d.Code)
		}
		if len(d.Reason) > maxCloseReason {
			return nil, badRequest("disconnect.reason: at most %d bytes (the WebSocket close frame limit), got %d", maxCloseReason, len(d.Reason))
		}
		code, reason = protocol.DisconnectCode(d.Code), d.Reason
	}
	var err error
	if req.Session != "" {
		err = a.hub.DisconnectSession(ctx, req.User, req.Client, req.Session, uint32(code), reason)
	} else {
		err = a.hub.DisconnectUser(ctx, req.User, req.Client, req.Whitelist, uint32(code), reason)
	}
	if err != nil {
		return nil, a.fromHub(ctx, "disconnect", "", "", err)
	}
	return &emptyResult{}, nil
}

// unsubscribe removes the user (or only its connection client) from the
// channel (every channel when empty) on every node; the clients get an
// unsubscribe push with 2000.
func (a *handler) unsubscribe(ctx context.Context, req *unsubscribeRequest) (*emptyResult, *Error) {
	if e := checkTarget(req.User, req.Client, req.Session); e != nil {
		return nil, e
	}
	var err error
	if req.Session != "" {
		err = a.hub.UnsubscribeSession(ctx, req.User, req.Channel, req.Client, req.Session)
	} else {
		err = a.hub.UnsubscribeUser(ctx, req.User, req.Channel, req.Client)
	}
	if err != nil {
		return nil, a.fromHub(ctx, "unsubscribe", req.Channel, "", err)
	}
	return &emptyResult{}, nil
}

// checkTarget refuses requests that would act on more connections than
// meant: no user, no client and no session would hit every anonymous
// connection. A session is the emulation session of an HTTP-streaming or
// SSE connection (the connect reply's session); other connections have
// none, so a session targets only such a connection.
func checkTarget(user, client, session string) *Error {
	if user == "" && client == "" && session == "" {
		return badRequest("user required (or client or session, for an anonymous connection)")
	}
	return nil
}
