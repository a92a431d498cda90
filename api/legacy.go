package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/protocol"
)

// The single endpoint, POST /api with {"method": …, "params": {…}}: the
// request format Centrifugo served before /api/<method> and still serves
// beside it, which older API clients (and hand-written backends) send.
// The body is one command or several, one JSON object after another
// (newline-separated); the answer is one reply per command, in order,
// newline-separated: {"id":…,"result":{…}} or {"id":…,"error":{…}}. The
// method is its name in any case ("publish", "PUBLISH") or the number of
// Centrifugo's Command.MethodType enum. Replies are always HTTP 200.

// legacyCommand is one command of the single endpoint.
type legacyCommand struct {
	ID     uint32          `json:"id,omitempty"`
	Method json.RawMessage `json:"method"`
	Params json.RawMessage `json:"params"`
}

// legacyReply is the reply to one legacyCommand.
type legacyReply struct {
	ID     uint32 `json:"id,omitempty"`
	Error  *Error `json:"error,omitempty"`
	Result any    `json:"result,omitempty"`
	// method is the command's method, for the error of a result past
	// Config.MaxResponseSize.
	method string
}

// legacyMethod reads a command's method: a name in any case or the
// number of Centrifugo's Command.MethodType (the table's methodType). It
// returns the name, and the row when the table has one; ok is false when
// raw is neither a name nor a known number.
func (s *methodSet) legacyMethod(raw json.RawMessage) (name string, m *method, ok bool) {
	if err := json.Unmarshal(raw, &name); err == nil {
		name = strings.ToLower(name)
		return name, s.byName[name], name != ""
	}
	n, err := strconv.Atoi(string(bytes.TrimSpace(raw)))
	if m := s.byType[n]; err == nil && m != nil {
		return m.name, m, true
	}
	return "", nil, false
}

// serveLegacy answers the single endpoint. body holds the commands.
func (a *handler) serveLegacy(w http.ResponseWriter, ctx context.Context, x *exchange, body []byte) {
	if len(bytes.TrimSpace(body)) == 0 {
		http.Error(w, "request body is empty: send {\"method\":\"…\",\"params\":{…}}, or POST to /api/<method>", http.StatusBadRequest)
		return
	}
	// All commands are read before any runs, so that a malformed or
	// oversized request runs nothing.
	var cmds []legacyCommand
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		var cmd legacyCommand
		err := dec.Decode(&cmd)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			http.Error(w, "request body is not JSON commands: "+err.Error(), http.StatusBadRequest)
			return
		}
		cmds = append(cmds, cmd)
	}
	if n := len(cmds); n > a.cfg.MaxBatchCommands {
		a.writeLegacy(w, x, []legacyReply{{Error: badRequest("%d commands, more than the limit of %d (http_api.max_batch_commands): send them in several requests", n, a.cfg.MaxBatchCommands)}})
		return
	}
	// The replies are bounded as a batch's are (batchstream.go): the one
	// that would pass MaxBatchResponseSize is error 106, and the commands
	// after it do not run.
	limit := a.cfg.MaxBatchResponseSize
	notRun := newError(protocol.ErrorLimitExceeded, "limit exceeded: the replies reached the limit of %d bytes (http_api.max_batch_response_size): command not run; send fewer or smaller reads per request", limit)
	dropped := newError(protocol.ErrorLimitExceeded, "limit exceeded: this reply would take the replies past the limit of %d bytes (http_api.max_batch_response_size): the command ran, its reply is dropped", limit)
	over := false
	for i := range cmds {
		if i > 0 {
			x.out.WriteByte('\n')
		}
		if over {
			if !a.encode(w, x, &legacyReply{ID: cmds[i].ID, Error: notRun}) {
				return
			}
			continue
		}
		mark := x.out.Len()
		rep := a.runLegacy(ctx, &cmds[i])
		if !a.encode(w, x, &rep) {
			return
		}
		if rep.Result != nil && int64(x.out.Len()-mark) > a.cfg.MaxResponseSize {
			x.out.Truncate(mark)
			if !a.encode(w, x, &legacyReply{ID: cmds[i].ID, Error: a.resultTooLarge(rep.method)}) {
				return
			}
		}
		if int64(x.out.Len()) > limit {
			over = true
			x.out.Truncate(mark)
			if !a.encode(w, x, &legacyReply{ID: cmds[i].ID, Error: dropped}) {
				return
			}
		}
	}
	writeJSON(w, http.StatusOK, x.out.Bytes())
}

// runLegacy runs one command of the single endpoint through the method of
// /api/<method>.
func (a *handler) runLegacy(ctx context.Context, cmd *legacyCommand) legacyReply {
	rep := legacyReply{ID: cmd.ID}
	if len(cmd.Method) == 0 {
		rep.Error = newError(protocol.ErrorMethodNotFound, "method required: a method name such as \"publish\", or its number")
		return rep
	}
	name, m, ok := a.methods.legacyMethod(cmd.Method)
	if !ok {
		rep.Error = newError(protocol.ErrorMethodNotFound, "method not found: %s (want a method name such as \"publish\", or its number)", bytes.TrimSpace(cmd.Method))
		return rep
	}
	switch {
	case name == "batch":
		rep.Error = badRequest("method batch: send several commands one after another in the body instead, or POST to /api/batch")
		return rep
	case m != nil && m.unavailable:
		rep.Error = unavailableError(name)
		return rep
	case m == nil:
		rep.Error = newError(protocol.ErrorMethodNotFound, "method not found: %q", name)
		return rep
	}
	ctx, span := a.traceLegacy(ctx, name)
	res, e, notJSON := a.call(ctx, m, cmd.Params)
	if notJSON {
		e = badRequest("params: not a JSON object")
	}
	endSpan(span, e)
	rep.Result, rep.Error, rep.method = res, e, name
	return rep
}

// writeLegacy answers the replies, newline-separated, with HTTP 200.
func (a *handler) writeLegacy(w http.ResponseWriter, x *exchange, replies []legacyReply) {
	for i := range replies {
		if i > 0 {
			x.out.WriteByte('\n')
		}
		if !a.encode(w, x, &replies[i]) {
			return
		}
	}
	writeJSON(w, http.StatusOK, x.out.Bytes())
}

// traceLegacy starts the span of one command of the single endpoint, a
// child of the request's; nil with tracing off.
func (a *handler) traceLegacy(ctx context.Context, method string) (context.Context, trace.Span) {
	if a.tracer == nil {
		return ctx, nil
	}
	return a.tracer.Start(ctx, "api."+method, trace.WithAttributes(attribute.String("herald.api.method", method)))
}
