package api

import (
	"context"

	"github.com/heraldhq/herald/api/grpcapi/apiproto"
)

// User status, in the shapes of Centrifugo PRO's api.proto
// (UpdateUserStatusRequest, GetUserStatusRequest, DeleteUserStatusRequest)
// and HTTP API; the hub keeps statuses in the engine (hub/userstatus.go).

type usersRequest struct {
	Users []string `json:"users"`
}

type updateUserStatusRequest struct {
	Users []string `json:"users"`
	State string   `json:"state"`
}

type userStatus struct {
	User   string `json:"user"`
	Active int64  `json:"active"`
	Online int64  `json:"online"`
	State  string `json:"state,omitempty"`
}

type getUserStatusResult struct {
	Statuses []userStatus `json:"statuses"`
}

func (a *handler) updateUserStatus(ctx context.Context, req *updateUserStatusRequest) (*emptyResult, *Error) {
	if err := a.hub.UpdateUserStatus(ctx, req.Users, req.State); err != nil {
		return nil, a.fromHub(ctx, "update_user_status", "", "", err)
	}
	return &emptyResult{}, nil
}

func (a *handler) getUserStatus(ctx context.Context, req *usersRequest) (*getUserStatusResult, *Error) {
	st, err := a.hub.GetUserStatus(ctx, req.Users)
	if err != nil {
		return nil, a.fromHub(ctx, "get_user_status", "", "", err)
	}
	out := &getUserStatusResult{Statuses: make([]userStatus, len(st))}
	for i, s := range st {
		out.Statuses[i] = userStatus(s)
	}
	return out, nil
}

func (a *handler) deleteUserStatus(ctx context.Context, req *usersRequest) (*emptyResult, *Error) {
	if err := a.hub.DeleteUserStatus(ctx, req.Users); err != nil {
		return nil, a.fromHub(ctx, "delete_user_status", "", "", err)
	}
	return &emptyResult{}, nil
}

func fromPBUpdateUserStatus(r *apiproto.UpdateUserStatusRequest) *updateUserStatusRequest {
	return &updateUserStatusRequest{Users: r.GetUsers(), State: r.GetState()}
}

func fromPBGetUserStatus(r *apiproto.GetUserStatusRequest) *usersRequest {
	return &usersRequest{Users: r.GetUsers()}
}

func fromPBDeleteUserStatus(r *apiproto.DeleteUserStatusRequest) *usersRequest {
	return &usersRequest{Users: r.GetUsers()}
}

func toPBGetUserStatus(r *getUserStatusResult) *apiproto.GetUserStatusResult {
	if r == nil {
		return nil
	}
	out := &apiproto.GetUserStatusResult{Statuses: make([]*apiproto.UserStatus, len(r.Statuses))}
	for i, s := range r.Statuses {
		out.Statuses[i] = &apiproto.UserStatus{User: s.User, Active: s.Active, Online: s.Online, State: s.State}
	}
	return out
}
