package api

import (
	"context"
	"encoding/base64"
	"encoding/json"

	"github.com/heraldhq/herald/hub"
)

// subscribe subscribes the user's connections (or only client) on every
// node; each gets a subscribe push.
func (a *handler) subscribe(ctx context.Context, req *subscribeRequest) (*emptyResult, *Error) {
	if req.Channel == "" {
		return nil, badRequest("channel required")
	}
	if e := checkTarget(req.User, req.Client, req.Session); e != nil {
		return nil, e
	}
	override, e := parseOverride(req.Override)
	if e != nil {
		return nil, e
	}
	info, e := optionalPayload("info", req.Info, "b64info", req.B64Info)
	if e != nil {
		return nil, e
	}
	data, e := optionalPayload("data", req.Data, "b64data", req.B64Data)
	if e != nil {
		return nil, e
	}
	opts := hub.SubscribeOptions{Info: info, Data: data, ExpireAt: req.ExpireAt, Session: req.Session, Override: override}
	if req.RecoverSince != nil {
		opts.RecoverSince = &hub.StreamPositionArg{Offset: req.RecoverSince.Offset, Epoch: req.RecoverSince.Epoch}
	}
	if err := a.hub.SubscribeUser(ctx, req.User, req.Channel, req.Client, opts); err != nil {
		return nil, a.fromHub(ctx, "subscribe", req.Channel, "", err)
	}
	return &emptyResult{}, nil
}

// refresh sets the expiry of the user's connections (or only client) on
// every node.
func (a *handler) refresh(ctx context.Context, req *refreshRequest) (*emptyResult, *Error) {
	if e := checkTarget(req.User, req.Client, req.Session); e != nil {
		return nil, e
	}
	info, e := optionalPayload("info", req.Info, "", "")
	if e != nil {
		return nil, e
	}
	var err error
	if req.Session != "" {
		err = a.hub.RefreshSession(ctx, req.User, req.Client, req.Session, req.Expired, req.ExpireAt, info)
	} else {
		err = a.hub.RefreshUser(ctx, req.User, req.Client, req.Expired, req.ExpireAt, info)
	}
	if err != nil {
		return nil, a.fromHub(ctx, "refresh", "", "", err)
	}
	return &emptyResult{}, nil
}

func (a *handler) rpc(_ context.Context, _ *rpcRequest) (*emptyResult, *Error) {
	return nil, notAvailable("rpc: the server API has no RPC methods")
}

// optionalPayload returns raw JSON, or base64-decoded bytes, or nil.
func optionalPayload(name string, raw json.RawMessage, b64name, b64 string) ([]byte, *Error) {
	if b64 != "" {
		b, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, badRequest("%s: %v", b64name, err)
		}
		return b, nil
	}
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	return raw, nil
}
