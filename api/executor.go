package api

import (
	"context"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

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
		return nil, newError(protocol.ErrorMethodNotFound, "method not found: %q", method)
	}
	res, e, notJSON := x.a.call(ctx, m, body)
	if notJSON {
		return nil, badRequest("request is not JSON")
	}
	if e != nil {
		return nil, e
	}
	if b, ok := res.(*broadcastResult); ok {
		for _, r := range b.Responses {
			if r.Error != nil {
				return res, r.Error
			}
		}
	}
	return res, nil
}
