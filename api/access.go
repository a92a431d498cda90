package api

import (
	"context"

	"github.com/heraldhq/herald/api/grpcapi/apiproto"
)

// Token revocation and user blocking, in the shapes of Centrifugo PRO's
// api.proto (BlockUserRequest, UnblockUserRequest, RevokeTokenRequest,
// InvalidateUserTokensRequest) and HTTP API. The hub stores each decision
// in the engine and tells every node (hub/access.go).

type blockUserRequest struct {
	User     string `json:"user"`
	ExpireAt int64  `json:"expire_at"`
}

type unblockUserRequest struct {
	User string `json:"user"`
}

type revokeTokenRequest struct {
	UID      string `json:"uid"`
	ExpireAt int64  `json:"expire_at"`
}

type invalidateUserTokensRequest struct {
	User         string `json:"user"`
	IssuedBefore int64  `json:"issued_before"`
	ExpireAt     int64  `json:"expire_at"`
	Channel      string `json:"channel"`
}

func (a *handler) blockUser(ctx context.Context, req *blockUserRequest) (*emptyResult, *Error) {
	if err := a.hub.BlockUser(ctx, req.User, req.ExpireAt); err != nil {
		return nil, a.fromHub(ctx, "block_user", "", "", err)
	}
	return &emptyResult{}, nil
}

func (a *handler) unblockUser(ctx context.Context, req *unblockUserRequest) (*emptyResult, *Error) {
	if err := a.hub.UnblockUser(ctx, req.User); err != nil {
		return nil, a.fromHub(ctx, "unblock_user", "", "", err)
	}
	return &emptyResult{}, nil
}

func (a *handler) revokeToken(ctx context.Context, req *revokeTokenRequest) (*emptyResult, *Error) {
	if err := a.hub.RevokeToken(ctx, req.UID, req.ExpireAt); err != nil {
		return nil, a.fromHub(ctx, "revoke_token", "", "", err)
	}
	return &emptyResult{}, nil
}

func (a *handler) invalidateUserTokens(ctx context.Context, req *invalidateUserTokensRequest) (*emptyResult, *Error) {
	if err := a.hub.InvalidateUserTokens(ctx, req.User, req.IssuedBefore, req.ExpireAt, req.Channel); err != nil {
		return nil, a.fromHub(ctx, "invalidate_user_tokens", req.Channel, "", err)
	}
	return &emptyResult{}, nil
}

func fromPBBlockUser(r *apiproto.BlockUserRequest) *blockUserRequest {
	return &blockUserRequest{User: r.GetUser(), ExpireAt: r.GetExpireAt()}
}

func fromPBUnblockUser(r *apiproto.UnblockUserRequest) *unblockUserRequest {
	return &unblockUserRequest{User: r.GetUser()}
}

func fromPBRevokeToken(r *apiproto.RevokeTokenRequest) *revokeTokenRequest {
	return &revokeTokenRequest{UID: r.GetUid(), ExpireAt: r.GetExpireAt()}
}

func fromPBInvalidateUserTokens(r *apiproto.InvalidateUserTokensRequest) *invalidateUserTokensRequest {
	return &invalidateUserTokensRequest{User: r.GetUser(), IssuedBefore: r.GetIssuedBefore(), ExpireAt: r.GetExpireAt(), Channel: r.GetChannel()}
}
