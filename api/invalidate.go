package api

import "context"

// invalidateStateRequest names the connections, or the subscriptions,
// whose clients must drop what they cached.
type invalidateStateRequest struct {
	User    string `json:"user"`
	Channel string `json:"channel"`
	Client  string `json:"client"`
	Session string `json:"session"`
}

// invalidateState makes clients drop their cached state on every node
// (hub.InvalidateState): without a channel the user's connections are
// closed with 3014, with one their subscriptions to it are ended with
// 2502, and a channel alone ends every subscriber's. Centrifugo 6.9.1
// has no such method; it is shaped as its unsubscribe is.
func (a *handler) invalidateState(ctx context.Context, req *invalidateStateRequest) (*emptyResult, *Error) {
	if req.Channel == "" {
		if e := checkTarget(req.User, req.Client, req.Session); e != nil {
			return nil, badRequest("channel or user required (or client or session, for an anonymous connection)")
		}
	}
	if err := a.hub.InvalidateState(ctx, req.User, req.Channel, req.Client, req.Session); err != nil {
		return nil, a.fromHub(ctx, "invalidate_state", req.Channel, "", err)
	}
	return &emptyResult{}, nil
}
