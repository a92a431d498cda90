package api

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"

	"github.com/heraldhq/herald/protocol"
)

// serveBatch runs the commands of a batch, in order or (with parallel)
// concurrently, and answers {"replies":[…]} with HTTP 200 whatever the
// commands' outcomes: each reply holds its method-named result or its
// error, in the order of the commands. The replies are streamed and
// bounded by MaxBatchResponseSize (see streamBatch).
func (a *handler) serveBatch(w http.ResponseWriter, r *http.Request, x *exchange, body []byte) {
	var req batchRequest
	if e, notJSON := decode(body, &req); notJSON {
		http.Error(w, "request body is not JSON", http.StatusBadRequest)
		return
	} else if e != nil {
		a.writeError(w, r, x, e, 0)
		return
	}
	// A reply is far larger than its command (a 3-byte {} for info
	// answers with the whole node list), so the number of commands, not
	// only the body size, bounds what one request may cost.
	if n := len(req.Commands); n > a.cfg.MaxBatchCommands {
		a.writeError(w, r, x, badRequest("batch: %d commands, more than the limit of %d: send them in several batches", n, a.cfg.MaxBatchCommands), 0)
		return
	}
	a.streamBatch(w, r.Context(), x, req.Commands, req.Parallel)
}

// runCommand runs one batch command and returns its reply (a pointer to
// the set's reply struct). The first method-named field set is the
// command, as in Centrifugo.
func (a *handler) runCommand(ctx context.Context, raw json.RawMessage) any {
	set := a.methods
	rep := reflect.New(set.reply)
	cmd := reflect.New(set.command)
	if e, notJSON := decode(raw, cmd.Interface()); e != nil || notJSON {
		if notJSON {
			e = badRequest("command is not JSON")
		}
		rep.Elem().Field(0).Set(reflect.ValueOf(e))
		return rep.Interface()
	}
	i := commandIndex(cmd.Elem())
	if i < 0 {
		_, span := a.traceCommand(ctx, "unknown")
		e := newError(protocol.ErrorMethodNotFound, "method not found: a command needs one method-named field (publish, broadcast, …)")
		rep.Elem().Field(0).Set(reflect.ValueOf(e))
		endSpan(span, e)
		return rep.Interface()
	}
	m := set.batch[i]
	ctx, span := a.traceCommand(ctx, m.name)
	res, e := m.run(a, ctx, cmd.Elem().Field(i).Interface())
	if res != nil {
		rep.Elem().Field(i + 1).Set(reflect.ValueOf(res))
	}
	if e != nil {
		rep.Elem().Field(0).Set(reflect.ValueOf(e))
	}
	endSpan(span, e)
	return rep.Interface()
}

// commandIndex is the index of the first set field of a batch command,
// or -1.
func commandIndex(cmd reflect.Value) int {
	for i := range cmd.NumField() {
		if !cmd.Field(i).IsNil() {
			return i
		}
	}
	return -1
}
