package api

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/heraldhq/herald/api/grpcapi/apiproto"
	"github.com/heraldhq/herald/hub"
)

// GRPCService is Centrifugo's gRPC API service (centrifugal.centrifugo.api.
// CentrifugoApi) over the same methods as the HTTP API: every rpc runs
// the method table's row of the same name, with its checks, limits,
// idempotency and error codes, and answers its error inside the
// response's error field, as Centrifugo does. The rows Herald does not
// have (user status, blocking, token revocation, push notifications)
// answer 108 "not available". Authentication is the gRPC server's
// (package api/grpcapi), not the service's.
//
// The service is built from the method table and api.proto's descriptor
// rather than from the generated CentrifugoApiServer interface: an rpc is
// the row whose name is the batch Command's field of the rpc's request
// type.
type GRPCService struct {
	a    *handler
	desc grpc.ServiceDesc
	// rpcs are the rows of the table by name, for the batch.
	rpcs map[string]*rpc
}

// rpc is one method of the service.
type rpc struct {
	m        *method
	fullName string // "/centrifugal.centrifugo.api.CentrifugoApi/Publish"
	req      protoreflect.MessageType
	resp     protoreflect.MessageType
}

// NewGRPCService returns the service for h. cfg's Key and Insecure are not
// used (the gRPC server checks the key); MaxBatchCommands,
// MaxBatchResponseSize, MaxResponseSize, Logger and TracerProvider are.
func NewGRPCService(h *hub.Hub, cfg Config) (*GRPCService, error) {
	if h == nil {
		return nil, errors.New("api: hub is required")
	}
	cfg.Insecure = true
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	a := &handler{hub: h, cfg: cfg, log: cfg.Logger, methods: newMethodSet()}
	if cfg.TracerProvider != nil {
		a.tracer = cfg.TracerProvider.Tracer(tracerName)
	}
	s := &GRPCService{a: a, rpcs: map[string]*rpc{}}
	if err := s.build(); err != nil {
		return nil, fmt.Errorf("api: gRPC service: %w", err)
	}
	return s, nil
}

// Register registers the service on a gRPC server.
func (s *GRPCService) Register(r grpc.ServiceRegistrar) {
	r.RegisterService(&s.desc, s)
}

// build makes the service description: Batch, and an rpc per row that
// api.proto has.
func (s *GRPCService) build() error {
	svc := apiService()
	s.desc = grpc.ServiceDesc{
		ServiceName: string(svc.FullName()),
		HandlerType: (*any)(nil),
		Streams:     []grpc.StreamDesc{},
		Metadata:    apiproto.File_api_proto.Path(),
	}
	// Every rpc must be served: the ones left here at the end have no row.
	left := map[protoreflect.FullName]bool{}
	for i := range svc.Methods().Len() {
		left[svc.Methods().Get(i).FullName()] = true
	}
	add := func(md protoreflect.MethodDescriptor, serve func(context.Context, proto.Message) (proto.Message, error)) (*rpc, error) {
		r := &rpc{fullName: "/" + string(svc.FullName()) + "/" + string(md.Name())}
		var err error
		if r.req, err = protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName()); err != nil {
			return nil, err
		}
		if r.resp, err = protoregistry.GlobalTypes.FindMessageByName(md.Output().FullName()); err != nil {
			return nil, err
		}
		s.desc.Methods = append(s.desc.Methods, grpc.MethodDesc{MethodName: string(md.Name()), Handler: r.handler(serve)})
		delete(left, md.FullName())
		return r, nil
	}
	if _, err := add(svc.Methods().ByName("Batch"), func(ctx context.Context, in proto.Message) (proto.Message, error) {
		return s.Batch(ctx, in.(*apiproto.BatchRequest))
	}); err != nil {
		return err
	}
	for i := range s.a.methods.rows {
		m := &s.a.methods.rows[i]
		if m.pb == nil && !m.unavailable {
			continue
		}
		md, err := rpcOf(m)
		if err != nil {
			return err
		}
		var r *rpc // set below, before the server can call serve
		r, err = add(md, func(ctx context.Context, in proto.Message) (proto.Message, error) {
			out := r.resp.New()
			res, e := s.run(ctx, r.m, in)
			resField := out.Descriptor().Fields().ByName("result")
			fill(out, res, e, resField, r.m)
			s.bound(out, resField, r.m)
			return out.Interface(), nil
		})
		if err != nil {
			return err
		}
		r.m = m
		s.rpcs[m.name] = r
	}
	for name := range left {
		return fmt.Errorf("api.proto's rpc %s has no row in the method table", name)
	}
	return nil
}

// apiService is api.proto's service.
func apiService() protoreflect.ServiceDescriptor {
	return apiproto.File_api_proto.Services().ByName("CentrifugoApi")
}

// rpcOf is the rpc of m: the one whose request is the type of the batch
// Command's field named after m.
func rpcOf(m *method) (protoreflect.MethodDescriptor, error) {
	fd := (&apiproto.Command{}).ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(m.name))
	if fd == nil || fd.Message() == nil {
		return nil, fmt.Errorf("method %s: api.proto's Command has no field %s", m.name, m.name)
	}
	methods := apiService().Methods()
	for i := range methods.Len() {
		if md := methods.Get(i); md.Input().FullName() == fd.Message().FullName() {
			return md, nil
		}
	}
	return nil, fmt.Errorf("method %s: api.proto has no rpc taking %s", m.name, fd.Message().FullName())
}

// handler is the grpc.MethodDesc handler of the rpc: it decodes the
// request and runs serve behind the server's interceptors, as generated
// code does.
func (r *rpc) handler(serve func(context.Context, proto.Message) (proto.Message, error)) func(any, context.Context, func(any) error, grpc.UnaryServerInterceptor) (any, error) {
	return func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
		in := r.req.New().Interface()
		if err := dec(in); err != nil {
			return nil, err
		}
		if interceptor == nil {
			return serve(ctx, in)
		}
		info := &grpc.UnaryServerInfo{Server: srv, FullMethod: r.fullName}
		return interceptor(ctx, in, info, func(ctx context.Context, req any) (any, error) {
			return serve(ctx, req.(proto.Message))
		})
	}
}

// run runs m for a protobuf request: its result message, or its error.
func (s *GRPCService) run(ctx context.Context, m *method, in proto.Message) (proto.Message, *Error) {
	if m.unavailable {
		return nil, unavailableError(m.name)
	}
	return m.pb.call(m.run, s.a, ctx, in)
}

// fill sets the error and the result (into resField, when the message
// has one) of a response or batch reply. A method whose result has no
// fields answers an empty result on success.
func fill(out protoreflect.Message, res proto.Message, e *Error, resField protoreflect.FieldDescriptor, m *method) {
	if e != nil {
		out.Set(out.Descriptor().Fields().ByName("error"), protoreflect.ValueOfMessage(ProtoError(e).ProtoReflect()))
	}
	if resField == nil {
		return
	}
	switch {
	case res != nil && res.ProtoReflect().IsValid():
		out.Set(resField, protoreflect.ValueOfMessage(res.ProtoReflect()))
	case e == nil && m.pb != nil && m.pb.empty:
		out.Set(resField, out.NewField(resField))
	}
}

// bound replaces the result of out (a response or batch reply) with
// error 106 when out is larger than Config.MaxResponseSize, as the HTTP
// API does: gRPC would otherwise hold and send it whole.
func (s *GRPCService) bound(out protoreflect.Message, resField protoreflect.FieldDescriptor, m *method) {
	if resField == nil || !out.Has(resField) || int64(proto.Size(out.Interface())) <= s.a.cfg.MaxResponseSize {
		return
	}
	out.Clear(resField)
	out.Set(out.Descriptor().Fields().ByName("error"), protoreflect.ValueOfMessage(ProtoError(s.a.resultTooLarge(m.name)).ProtoReflect()))
}
