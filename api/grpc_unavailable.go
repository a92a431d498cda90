package api

import (
	"context"

	"github.com/heraldhq/herald/api/grpcapi/apiproto"
)

// The methods of api.proto that Herald does not have: user status, user
// blocking, token revocation and push notifications (Centrifugo PRO
// features). Each answers 108 "not available" in its error field, as an
// open-source Centrifugo does, rather than a gRPC Unimplemented status
// that generated clients would raise as a transport failure.

const unavailableReason = "Herald does not have this method"

func unavailable(method string) *apiproto.Error {
	return toPBError(notAvailable(method + ": " + unavailableReason))
}

// unavailableCommand names the unavailable method a batch command asks
// for, or "".
func unavailableCommand(cmd *apiproto.Command) string {
	switch {
	case cmd.GetUpdateUserStatus() != nil:
		return "update_user_status"
	case cmd.GetGetUserStatus() != nil:
		return "get_user_status"
	case cmd.GetDeleteUserStatus() != nil:
		return "delete_user_status"
	case cmd.GetBlockUser() != nil:
		return "block_user"
	case cmd.GetUnblockUser() != nil:
		return "unblock_user"
	case cmd.GetRevokeToken() != nil:
		return "revoke_token"
	case cmd.GetInvalidateUserTokens() != nil:
		return "invalidate_user_tokens"
	case cmd.GetDeviceRegister() != nil:
		return "device_register"
	case cmd.GetDeviceUpdate() != nil:
		return "device_update"
	case cmd.GetDeviceRemove() != nil:
		return "device_remove"
	case cmd.GetDeviceList() != nil:
		return "device_list"
	case cmd.GetDeviceTopicList() != nil:
		return "device_topic_list"
	case cmd.GetDeviceTopicUpdate() != nil:
		return "device_topic_update"
	case cmd.GetUserTopicList() != nil:
		return "user_topic_list"
	case cmd.GetUserTopicUpdate() != nil:
		return "user_topic_update"
	case cmd.GetSendPushNotification() != nil:
		return "send_push_notification"
	case cmd.GetUpdatePushStatus() != nil:
		return "update_push_status"
	case cmd.GetCancelPush() != nil:
		return "cancel_push"
	}
	return ""
}

func (s *GRPCService) UpdateUserStatus(context.Context, *apiproto.UpdateUserStatusRequest) (*apiproto.UpdateUserStatusResponse, error) {
	return &apiproto.UpdateUserStatusResponse{Error: unavailable("update_user_status")}, nil
}

func (s *GRPCService) GetUserStatus(context.Context, *apiproto.GetUserStatusRequest) (*apiproto.GetUserStatusResponse, error) {
	return &apiproto.GetUserStatusResponse{Error: unavailable("get_user_status")}, nil
}

func (s *GRPCService) DeleteUserStatus(context.Context, *apiproto.DeleteUserStatusRequest) (*apiproto.DeleteUserStatusResponse, error) {
	return &apiproto.DeleteUserStatusResponse{Error: unavailable("delete_user_status")}, nil
}

func (s *GRPCService) BlockUser(context.Context, *apiproto.BlockUserRequest) (*apiproto.BlockUserResponse, error) {
	return &apiproto.BlockUserResponse{Error: unavailable("block_user")}, nil
}

func (s *GRPCService) UnblockUser(context.Context, *apiproto.UnblockUserRequest) (*apiproto.UnblockUserResponse, error) {
	return &apiproto.UnblockUserResponse{Error: unavailable("unblock_user")}, nil
}

func (s *GRPCService) RevokeToken(context.Context, *apiproto.RevokeTokenRequest) (*apiproto.RevokeTokenResponse, error) {
	return &apiproto.RevokeTokenResponse{Error: unavailable("revoke_token")}, nil
}

func (s *GRPCService) InvalidateUserTokens(context.Context, *apiproto.InvalidateUserTokensRequest) (*apiproto.InvalidateUserTokensResponse, error) {
	return &apiproto.InvalidateUserTokensResponse{Error: unavailable("invalidate_user_tokens")}, nil
}

func (s *GRPCService) DeviceRegister(context.Context, *apiproto.DeviceRegisterRequest) (*apiproto.DeviceRegisterResponse, error) {
	return &apiproto.DeviceRegisterResponse{Error: unavailable("device_register")}, nil
}

func (s *GRPCService) DeviceUpdate(context.Context, *apiproto.DeviceUpdateRequest) (*apiproto.DeviceUpdateResponse, error) {
	return &apiproto.DeviceUpdateResponse{Error: unavailable("device_update")}, nil
}

func (s *GRPCService) DeviceRemove(context.Context, *apiproto.DeviceRemoveRequest) (*apiproto.DeviceRemoveResponse, error) {
	return &apiproto.DeviceRemoveResponse{Error: unavailable("device_remove")}, nil
}

func (s *GRPCService) DeviceList(context.Context, *apiproto.DeviceListRequest) (*apiproto.DeviceListResponse, error) {
	return &apiproto.DeviceListResponse{Error: unavailable("device_list")}, nil
}

func (s *GRPCService) DeviceTopicList(context.Context, *apiproto.DeviceTopicListRequest) (*apiproto.DeviceTopicListResponse, error) {
	return &apiproto.DeviceTopicListResponse{Error: unavailable("device_topic_list")}, nil
}

func (s *GRPCService) DeviceTopicUpdate(context.Context, *apiproto.DeviceTopicUpdateRequest) (*apiproto.DeviceTopicUpdateResponse, error) {
	return &apiproto.DeviceTopicUpdateResponse{Error: unavailable("device_topic_update")}, nil
}

func (s *GRPCService) UserTopicList(context.Context, *apiproto.UserTopicListRequest) (*apiproto.UserTopicListResponse, error) {
	return &apiproto.UserTopicListResponse{Error: unavailable("user_topic_list")}, nil
}

func (s *GRPCService) UserTopicUpdate(context.Context, *apiproto.UserTopicUpdateRequest) (*apiproto.UserTopicUpdateResponse, error) {
	return &apiproto.UserTopicUpdateResponse{Error: unavailable("user_topic_update")}, nil
}

func (s *GRPCService) SendPushNotification(context.Context, *apiproto.SendPushNotificationRequest) (*apiproto.SendPushNotificationResponse, error) {
	return &apiproto.SendPushNotificationResponse{Error: unavailable("send_push_notification")}, nil
}

func (s *GRPCService) UpdatePushStatus(context.Context, *apiproto.UpdatePushStatusRequest) (*apiproto.UpdatePushStatusResponse, error) {
	return &apiproto.UpdatePushStatusResponse{Error: unavailable("update_push_status")}, nil
}

func (s *GRPCService) CancelPush(context.Context, *apiproto.CancelPushRequest) (*apiproto.CancelPushResponse, error) {
	return &apiproto.CancelPushResponse{Error: unavailable("cancel_push")}, nil
}
