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
	notRun := ProtoError(newError(protocol.ErrorLimitExceeded, "limit exceeded: the batch's replies reached the limit of %d bytes (http_api.max_batch_response_size): command not run; send fewer or smaller reads per batch", size))
	dropped := ProtoError(newError(protocol.ErrorLimitExceeded, "limit exceeded: this reply would take the batch's replies past the limit of %d bytes (http_api.max_batch_response_size): the command ran, its reply is dropped", size))
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
	msg := cmd.ProtoReflect()
	fields := msg.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if !msg.Has(fd) {
			continue
		}
		r := s.rpcs[string(fd.Name())]
		if r == nil {
			break
		}
		res, e := s.run(ctx, r.m, msg.Get(fd).Message().Interface())
		out := rep.ProtoReflect()
		resField := out.Descriptor().Fields().ByName(fd.Name())
		fill(out, res, e, resField, r.m)
		s.bound(out, resField, r.m)
		return rep
	}
	rep.Error = ProtoError(newError(protocol.ErrorMethodNotFound, "method not found: a command needs one method field (publish, broadcast, …)"))
	return rep
}
