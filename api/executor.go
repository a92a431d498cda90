package api

import (
	"context"
	"fmt"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// Error is the error of a command run by an Executor: the code and
// message the HTTP API would answer with.
type Error struct {
	Code    uint32
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("api error %d: %s", e.Code, e.Message) }

// Temporary reports whether running the command again may succeed: an
// internal error (100: the engine failed or timed out) or a limit hit
// (111), as protocol.ErrorCode.Temporary says. Every other code is about the command itself (bad request,
// unknown channel or method, feature off) and repeats on every attempt.
func (e *Error) Temporary() bool {
	return protocol.ErrorCode(e.Code).Temporary()
}

// Executor runs API commands without HTTP, through the same code as the
// HTTP API (decoding, checks, idempotency window, errors), for callers
// inside the node such as the asynchronous consumers (package consumer).
type Executor struct {
	a *handler
}

// NewExecutor returns an executor of the API methods on h. The key and
// HTTP options of cfg do not apply; Logger and TracerProvider do.
func NewExecutor(h *hub.Hub, cfg Config) (*Executor, error) {
	cfg.Key, cfg.Insecure = "", true
	x, err := NewHandler(h, cfg)
	if err != nil {
		return nil, err
	}
	return &Executor{a: x.(*handler)}, nil
}

// Execute runs one command: method is an API method name ("publish",
// "broadcast", …; not "batch") and body its JSON request, as POST
// /api/{method} takes it. A broadcast whose publication failed in some
// channel is an error too (the first channel's), so that a caller retrying
// it does not lose that channel; its idempotency_key keeps the others
// from receiving it twice. The result is what the HTTP API would answer
// inside {"result":…}.
func (x *Executor) Execute(ctx context.Context, method string, body []byte) (any, error) {
	m := x.a.methods.route(method)
	if m == nil {
		return nil, &Error{Code: uint32(protocol.ErrorMethodNotFound), Message: fmt.Sprintf("method not found: %q", method)}
	}
	res, e, notJSON := x.a.call(ctx, m, body)
	if notJSON {
		return nil, &Error{Code: uint32(protocol.ErrorBadRequest), Message: "request is not JSON"}
	}
	if e != nil {
		return nil, &Error{Code: e.Code, Message: e.Message}
	}
	if b, ok := res.(*broadcastResult); ok {
		for _, r := range b.Responses {
			if r.Error != nil {
				return res, &Error{Code: r.Error.Code, Message: r.Error.Message}
			}
		}
	}
	return res, nil
}
