package api_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/protocol"
)

// TestErrorPredicates: the predicates and CodeOf find an API error
// through wrapping; its HTTP status and gRPC code are those of the
// transport error modes; it converts to and from api.proto's Error.
func TestErrorPredicates(t *testing.T) {
	for _, tc := range []struct {
		code   protocol.ErrorCode
		is     func(error) bool
		status int
		grpc   codes.Code
	}{
		{protocol.ErrorInternal, api.IsInternal, http.StatusInternalServerError, codes.Internal},
		{protocol.ErrorUnknownChannel, api.IsUnknownChannel, http.StatusNotFound, codes.NotFound},
		{protocol.ErrorMethodNotFound, api.IsMethodNotFound, http.StatusNotFound, codes.NotFound},
		{protocol.ErrorLimitExceeded, api.IsLimitExceeded, http.StatusInternalServerError, codes.Internal},
		{protocol.ErrorBadRequest, api.IsBadRequest, http.StatusBadRequest, codes.InvalidArgument},
		{protocol.ErrorNotAvailable, api.IsNotAvailable, http.StatusBadRequest, codes.InvalidArgument},
		{protocol.ErrorUnrecoverablePosition, nil, http.StatusRequestedRangeNotSatisfiable, codes.OutOfRange},
		{protocol.ErrorConcurrentPagination, nil, http.StatusConflict, codes.AlreadyExists},
	} {
		e := &api.Error{Code: tc.code, Message: "m"}
		err := fmt.Errorf("context: %w", e)
		if tc.is != nil && (!tc.is(err) || tc.is(errors.New("other"))) {
			t.Errorf("%d: predicate does not see it through wrapping, or sees another error", tc.code)
		}
		if c, ok := api.CodeOf(err); !ok || c != tc.code {
			t.Errorf("%d: CodeOf = %d, %v", tc.code, c, ok)
		}
		if api.HTTPStatus(e) != tc.status || api.GRPCCode(e) != tc.grpc {
			t.Errorf("%d: status %d and %v, want %d and %v", tc.code, api.HTTPStatus(e), api.GRPCCode(e), tc.status, tc.grpc)
		}
		if s, ok := status.FromError(api.GRPCStatus(e).Err()); !ok || s.Code() != tc.grpc || s.Message() != "m" {
			t.Errorf("%d: gRPC status %v", tc.code, s)
		}
		if back := api.FromProto(api.ProtoError(e)); back.Code != e.Code || back.Message != e.Message {
			t.Errorf("%d: through api.proto: %+v", tc.code, back)
		}
	}
	if api.IsBadRequest(&api.Error{Code: protocol.ErrorNotAvailable}) {
		t.Error("108 is not a bad request")
	}
}
