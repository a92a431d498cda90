package api

import (
	"context"
	"encoding/json"
	"net/http"

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

// runCommand runs one batch command into rep. The first method-named
// field set is the command, as in Centrifugo.
func (a *handler) runCommand(ctx context.Context, raw json.RawMessage, rep *reply) {
	var cmd command
	if e, notJSON := decode(raw, &cmd); e != nil || notJSON {
		rep.Error = e
		if notJSON {
			rep.Error = badRequest("command is not JSON")
		}
		return
	}
	ctx, span := a.traceCommand(ctx, &cmd)
	var e *apiError
	switch {
	case cmd.Publish != nil:
		rep.Publish, e = a.publish(ctx, cmd.Publish)
	case cmd.Broadcast != nil:
		rep.Broadcast, e = a.broadcast(ctx, cmd.Broadcast)
	case cmd.Subscribe != nil:
		rep.Subscribe, e = a.subscribe(ctx, cmd.Subscribe)
	case cmd.Unsubscribe != nil:
		rep.Unsubscribe, e = a.unsubscribe(ctx, cmd.Unsubscribe)
	case cmd.Disconnect != nil:
		rep.Disconnect, e = a.disconnect(ctx, cmd.Disconnect)
	case cmd.Presence != nil:
		rep.Presence, e = a.presence(ctx, cmd.Presence)
	case cmd.PresenceStats != nil:
		rep.PresenceStats, e = a.presenceStats(ctx, cmd.PresenceStats)
	case cmd.History != nil:
		rep.History, e = a.history(ctx, cmd.History)
	case cmd.HistoryRemove != nil:
		rep.HistoryRemove, e = a.historyRemove(ctx, cmd.HistoryRemove)
	case cmd.Info != nil:
		rep.Info, e = a.info(ctx, cmd.Info)
	case cmd.RPC != nil:
		rep.RPC, e = a.rpc(ctx, cmd.RPC)
	case cmd.Refresh != nil:
		rep.Refresh, e = a.refresh(ctx, cmd.Refresh)
	case cmd.Channels != nil:
		rep.Channels, e = a.channels(ctx, cmd.Channels)
	case cmd.Connections != nil:
		rep.Connections, e = a.connections(ctx, cmd.Connections)
	case cmd.MapPublish != nil:
		rep.MapPublish, e = a.mapPublish(ctx, cmd.MapPublish)
	case cmd.MapRemove != nil:
		rep.MapRemove, e = a.mapRemove(ctx, cmd.MapRemove)
	case cmd.MapReadState != nil:
		rep.MapReadState, e = a.mapReadState(ctx, cmd.MapReadState)
	case cmd.MapReadStream != nil:
		rep.MapReadStream, e = a.mapReadStream(ctx, cmd.MapReadStream)
	case cmd.MapStats != nil:
		rep.MapStats, e = a.mapStats(ctx, cmd.MapStats)
	case cmd.MapClear != nil:
		rep.MapClear, e = a.mapClear(ctx, cmd.MapClear)
	default:
		e = newError(protocol.ErrorMethodNotFound, "method not found: a command needs one method-named field (publish, broadcast, …)")
	}
	rep.Error = e
	endSpan(span, e)
}

// method is the command's method name, as in the path of a single request.
func (cmd *command) method() string {
	switch {
	case cmd.Publish != nil:
		return "publish"
	case cmd.Broadcast != nil:
		return "broadcast"
	case cmd.Subscribe != nil:
		return "subscribe"
	case cmd.Unsubscribe != nil:
		return "unsubscribe"
	case cmd.Disconnect != nil:
		return "disconnect"
	case cmd.Presence != nil:
		return "presence"
	case cmd.PresenceStats != nil:
		return "presence_stats"
	case cmd.History != nil:
		return "history"
	case cmd.HistoryRemove != nil:
		return "history_remove"
	case cmd.Info != nil:
		return "info"
	case cmd.RPC != nil:
		return "rpc"
	case cmd.Refresh != nil:
		return "refresh"
	case cmd.Channels != nil:
		return "channels"
	case cmd.Connections != nil:
		return "connections"
	case cmd.MapPublish != nil:
		return "map_publish"
	case cmd.MapRemove != nil:
		return "map_remove"
	case cmd.MapReadState != nil:
		return "map_read_state"
	case cmd.MapReadStream != nil:
		return "map_read_stream"
	case cmd.MapStats != nil:
		return "map_stats"
	case cmd.MapClear != nil:
		return "map_clear"
	}
	return "unknown"
}
