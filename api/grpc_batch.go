package api

import (
	"context"
	"sync/atomic"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/heraldhq/herald/api/grpcapi/apiproto"
	"github.com/heraldhq/herald/protocol"
)

// Batch runs the commands in order, or concurrently with parallel, each
// through the same method as a single call; each reply holds its result
// or error, in the order of the commands. A batch over MaxBatchCommands
// runs nothing and is refused with InvalidArgument: BatchResponse has no
// error field of its own. The replies are bounded by MaxBatchResponseSize
// as over HTTP: the reply that passes it is error 106, and commands not
// started by then do not run (error 106 too).
func (s *GRPCService) Batch(ctx context.Context, req *apiproto.BatchRequest) (*apiproto.BatchResponse, error) {
	cmds := req.GetCommands()
	if n := len(cmds); n > s.a.cfg.MaxBatchCommands {
		return nil, status.Errorf(codes.InvalidArgument, "batch: %d commands, more than the limit of %d: send them in several batches", n, s.a.cfg.MaxBatchCommands)
	}
	out := &apiproto.BatchResponse{Replies: make([]*apiproto.Reply, len(cmds))}
	limit := 1
	if req.GetParallel() {
		limit = maxConcurrency
	}
	size := s.a.cfg.MaxBatchResponseSize
	notRun := toPBError(newError(protocol.ErrorLimitExceeded, "limit exceeded: the batch's replies reached the limit of %d bytes (http_api.max_batch_response_size): command not run; send fewer or smaller reads per batch", size))
	dropped := toPBError(newError(protocol.ErrorLimitExceeded, "limit exceeded: this reply would take the batch's replies past the limit of %d bytes (http_api.max_batch_response_size): the command ran, its reply is dropped", size))
	var total atomic.Int64
	var over atomic.Bool
	forEach(len(cmds), limit, func(i int) {
		if over.Load() {
			out.Replies[i] = &apiproto.Reply{Error: notRun}
			return
		}
		rep := s.runCommand(ctx, cmds[i])
		if total.Add(int64(proto.Size(rep))) > size {
			over.Store(true)
			rep = &apiproto.Reply{Error: dropped}
		}
		out.Replies[i] = rep
	})
	return out, nil
}

// runCommand runs the first method set in cmd, in the order of the
// Command message's fields, as the HTTP API's batch does.
func (s *GRPCService) runCommand(ctx context.Context, cmd *apiproto.Command) *apiproto.Reply {
	rep := &apiproto.Reply{}
	switch {
	case cmd.GetPublish() != nil:
		r, _ := s.Publish(ctx, cmd.GetPublish())
		rep.Publish, rep.Error = r.Result, r.Error
	case cmd.GetBroadcast() != nil:
		r, _ := s.Broadcast(ctx, cmd.GetBroadcast())
		rep.Broadcast, rep.Error = r.Result, r.Error
	case cmd.GetSubscribe() != nil:
		r, _ := s.Subscribe(ctx, cmd.GetSubscribe())
		rep.Subscribe, rep.Error = r.Result, r.Error
	case cmd.GetUnsubscribe() != nil:
		r, _ := s.Unsubscribe(ctx, cmd.GetUnsubscribe())
		rep.Unsubscribe, rep.Error = r.Result, r.Error
	case cmd.GetDisconnect() != nil:
		r, _ := s.Disconnect(ctx, cmd.GetDisconnect())
		rep.Disconnect, rep.Error = r.Result, r.Error
	case cmd.GetPresence() != nil:
		r, _ := s.Presence(ctx, cmd.GetPresence())
		rep.Presence, rep.Error = r.Result, r.Error
	case cmd.GetPresenceStats() != nil:
		r, _ := s.PresenceStats(ctx, cmd.GetPresenceStats())
		rep.PresenceStats, rep.Error = r.Result, r.Error
	case cmd.GetHistory() != nil:
		r, _ := s.History(ctx, cmd.GetHistory())
		rep.History, rep.Error = r.Result, r.Error
	case cmd.GetHistoryRemove() != nil:
		r, _ := s.HistoryRemove(ctx, cmd.GetHistoryRemove())
		rep.HistoryRemove, rep.Error = r.Result, r.Error
	case cmd.GetInfo() != nil:
		r, _ := s.Info(ctx, cmd.GetInfo())
		rep.Info, rep.Error = r.Result, r.Error
	case cmd.GetRpc() != nil:
		r, _ := s.RPC(ctx, cmd.GetRpc())
		rep.Rpc, rep.Error = r.Result, r.Error
	case cmd.GetRefresh() != nil:
		r, _ := s.Refresh(ctx, cmd.GetRefresh())
		rep.Refresh, rep.Error = r.Result, r.Error
	case cmd.GetChannels() != nil:
		r, _ := s.Channels(ctx, cmd.GetChannels())
		rep.Channels, rep.Error = r.Result, r.Error
	case cmd.GetConnections() != nil:
		r, _ := s.Connections(ctx, cmd.GetConnections())
		rep.Connections, rep.Error = r.Result, r.Error
	case unavailableCommand(cmd) != "":
		rep.Error = toPBError(notAvailable(unavailableCommand(cmd) + ": " + unavailableReason))
	default:
		rep.Error = toPBError(newError(protocol.ErrorMethodNotFound, "method not found: a command needs one method field (publish, broadcast, …)"))
	}
	return rep
}
