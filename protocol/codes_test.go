package protocol

import "testing"

func TestErrorCodes(t *testing.T) {
	tests := []struct {
		code      ErrorCode
		num       uint32
		message   string
		temporary bool
	}{
		{ErrorInternal, 100, "internal server error", true},
		{ErrorUnauthorized, 101, "unauthorized", false},
		{ErrorUnknownChannel, 102, "unknown channel", false},
		{ErrorPermissionDenied, 103, "permission denied", false},
		{ErrorMethodNotFound, 104, "method not found", false},
		{ErrorAlreadySubscribed, 105, "already subscribed", false},
		{ErrorLimitExceeded, 106, "limit exceeded", false},
		{ErrorBadRequest, 107, "bad request", false},
		{ErrorNotAvailable, 108, "not available", false},
		{ErrorTokenExpired, 109, "token expired", false},
		{ErrorExpired, 110, "expired", false},
		{ErrorTooManyRequests, 111, "too many requests", true},
		{ErrorUnrecoverablePosition, 112, "unrecoverable position", false},
		{ErrorConcurrentPagination, 113, "concurrent pagination", true},
	}
	for _, tt := range tests {
		if uint32(tt.code) != tt.num || tt.code.Message() != tt.message || tt.code.Temporary() != tt.temporary {
			t.Errorf("%d: got %d %q temporary=%v, want %d %q %v",
				tt.num, uint32(tt.code), tt.code.Message(), tt.code.Temporary(), tt.num, tt.message, tt.temporary)
		}
		e := NewError(tt.code)
		if e.Code != tt.num || e.Message != tt.message || e.Temporary != tt.temporary {
			t.Errorf("NewError(%d) = %v", tt.num, e)
		}
	}
	if got := ErrorCode(4001).String(); got != "error 4001" || ErrorCode(4001).Message() != "" {
		t.Errorf("unknown code: String %q Message %q", got, ErrorCode(4001).Message())
	}
}

func TestDisconnectCodes(t *testing.T) {
	tests := []struct {
		code      DisconnectCode
		num       uint32
		reason    string
		reconnect bool
	}{
		{DisconnectConnectionClosed, 3000, "connection closed", true},
		{DisconnectShutdown, 3001, "shutdown", true},
		{DisconnectServerError, 3004, "internal server error", true},
		{DisconnectExpired, 3005, "connection expired", true},
		{DisconnectSubExpired, 3006, "subscription expired", true},
		{DisconnectSlow, 3008, "slow", true},
		{DisconnectWriteError, 3009, "write error", true},
		{DisconnectInsufficientState, 3010, "insufficient state", true},
		{DisconnectForceReconnect, 3011, "force reconnect", true},
		{DisconnectNoPong, 3012, "no pong", true},
		{DisconnectTooManyRequests, 3013, "too many requests", true},
		{DisconnectStateInvalidated, 3014, "state invalidated", true},
		{DisconnectInvalidToken, 3500, "invalid token", false},
		{DisconnectBadRequest, 3501, "bad request", false},
		{DisconnectStale, 3502, "stale", false},
		{DisconnectForceNoReconnect, 3503, "force disconnect", false},
		{DisconnectConnectionLimit, 3504, "connection limit", false},
		{DisconnectChannelLimit, 3505, "channel limit", false},
		{DisconnectInappropriateProtocol, 3506, "inappropriate protocol", false},
		{DisconnectPermissionDenied, 3507, "permission denied", false},
		{DisconnectNotAvailable, 3508, "not available", false},
		{DisconnectTooManyErrors, 3509, "too many errors", false},
	}
	for _, tt := range tests {
		if uint32(tt.code) != tt.num || tt.code.Reason() != tt.reason || tt.code.Reconnect() != tt.reconnect {
			t.Errorf("%d: got %d %q reconnect=%v, want %q %v",
				tt.num, uint32(tt.code), tt.code.Reason(), tt.code.Reconnect(), tt.reason, tt.reconnect)
		}
		if len(tt.code.Reason()) >= 123 {
			t.Errorf("%d: reason too long for a close frame", tt.num)
		}
		p := tt.code.Push()
		if p.Code != tt.num || p.Reason != tt.reason || p.Reconnect {
			t.Errorf("%d: Push() = %v", tt.num, p)
		}
	}
	ranges := map[DisconnectCode]bool{
		1000: true, 1009: false, 2999: true,
		3499: true, 3500: false, 3999: false,
		4000: true, 4499: true, 4500: false, 4999: false,
		5000: true,
	}
	for code, want := range ranges {
		if got := code.Reconnect(); got != want {
			t.Errorf("%d.Reconnect() = %v, want %v", code, got, want)
		}
	}
	if got := DisconnectCode(4100).String(); got != "disconnect 4100" {
		t.Errorf("unknown code String = %q", got)
	}
}

func TestUnsubscribeCodes(t *testing.T) {
	tests := []struct {
		code        UnsubscribeCode
		num         uint32
		reason      string
		resubscribe bool
	}{
		{UnsubscribeServer, 2000, "server unsubscribe", false},
		{UnsubscribeInsufficientState, 2500, "insufficient state", true},
		{UnsubscribeExpired, 2501, "subscription expired", true},
		{UnsubscribeStateInvalidated, 2502, "state invalidated", true},
	}
	for _, tt := range tests {
		if uint32(tt.code) != tt.num || tt.code.Reason() != tt.reason || tt.code.Resubscribe() != tt.resubscribe {
			t.Errorf("%d: got %d %q resubscribe=%v", tt.num, uint32(tt.code), tt.code.Reason(), tt.code.Resubscribe())
		}
		if p := tt.code.Push(); p.Code != tt.num || p.Reason != tt.reason {
			t.Errorf("%d: Push() = %v", tt.num, p)
		}
	}
	if got := UnsubscribeCode(2999).String(); got != "unsubscribe 2999" {
		t.Errorf("unknown code String = %q", got)
	}
}
