package api

import "context"

// The methods here need hub support that does not exist yet. They check
// their request like the real ones will, so callers see field errors
// first, and then answer 108.

func (a *handler) subscribe(_ context.Context, req *subscribeRequest) (*emptyResult, *apiError) {
	if req.Channel == "" {
		return nil, badRequest("channel required")
	}
	if req.User == "" {
		return nil, badRequest("user required")
	}
	return nil, notAvailable("server-side subscribe is not supported yet")
}

func (a *handler) refresh(_ context.Context, req *refreshRequest) (*emptyResult, *apiError) {
	if req.User == "" {
		return nil, badRequest("user required")
	}
	return nil, notAvailable("refresh is not supported yet")
}

func (a *handler) rpc(_ context.Context, _ *rpcRequest) (*emptyResult, *apiError) {
	return nil, notAvailable("rpc: the server API has no RPC methods")
}
