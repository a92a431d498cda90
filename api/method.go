package api

import (
	"context"
	"reflect"
	"strconv"

	"google.golang.org/protobuf/proto"
)

// method is one row of the method table (methods.go). Everything that
// lists methods (the /api/<method> routes, the single endpoint's names
// and numbers, the batch command and reply, the gRPC service, the docs
// and the OpenAPI document) is produced from the rows.
type method struct {
	// name is the method's name: its path under /api, its field in a
	// batch command and reply, its name at the single endpoint.
	name string
	// methodType is the number of Centrifugo's Command.MethodType that
	// the single endpoint accepts for it, or noMethodType.
	methodType int
	// doc is one line for the docs; params and result describe the
	// request and the result in docs/api.md's method table.
	doc, params, result string
	// clusterWide: the method asks or acts on every node of the cluster.
	clusterWide bool
	// batchable: a batch command may name the method.
	batchable bool
	// idempotent: running the request twice has the effect of running it
	// once, so that a caller may retry it.
	idempotent bool
	// unavailable: a Centrifugo method Herald does not have. It answers
	// 108 at the single endpoint and over gRPC; it has no route.
	unavailable bool

	// req and res are the request and result types (nil when
	// unavailable); newReq makes a *req, run runs the method on one.
	req, res reflect.Type
	newReq   func() any
	run      runner
	// pb is the method's gRPC form; nil when api.proto has no rpc for it.
	pb *pbBinding
}

// noMethodType marks a method without a Command.MethodType number.
const noMethodType = -1

// runner runs a method on a request made by its newReq. The result is a
// non-nil pointer to the method's result type, or nil.
type runner func(a *handler, ctx context.Context, req any) (any, *Error)

// endpoint is the row of a method run by run: the one function a new
// method needs besides its row. The row is batchable, with no
// Command.MethodType; its options are set with the methods below.
func endpoint[Req, Res any](name, doc string, run func(*handler, context.Context, *Req) (*Res, *Error)) method {
	return method{
		name: name, doc: doc, methodType: noMethodType, batchable: true,
		req:    reflect.TypeFor[Req](),
		res:    reflect.TypeFor[Res](),
		newReq: func() any { return new(Req) },
		run: func(a *handler, ctx context.Context, req any) (any, *Error) {
			res, e := run(a, ctx, req.(*Req))
			if res == nil {
				return nil, e
			}
			return res, e
		},
	}
}

// unavailableMethod is the row of a Centrifugo method Herald does not
// have.
func unavailableMethod(name string, methodType int, doc string) method {
	return method{name: name, methodType: methodType, doc: doc, unavailable: true}
}

// legacy sets the method's Command.MethodType number.
func (m method) legacy(n int) method { m.methodType = n; return m }

// describe sets the request and result columns of the docs.
func (m method) describe(params, result string) method {
	m.params, m.result = params, result
	return m
}

// cluster marks the method as asking or acting on every node.
func (m method) cluster() method { m.clusterWide = true; return m }

// retryable marks the method as idempotent.
func (m method) retryable() method { m.idempotent = true; return m }

// grpc sets the method's gRPC form (see pb).
func (m method) grpc(b *pbBinding) method { m.pb = b; return m }

// pbBinding runs a method for its gRPC rpc: call converts the protobuf
// request, runs the method with run and converts its result. The rpc is
// the one of api.proto whose request is the type of the batch Command's
// field named after the method (grpc.go).
type pbBinding struct {
	// req and res are the types the conversions take and give, which a
	// test checks against the row's.
	req, res reflect.Type
	call     func(run runner, a *handler, ctx context.Context, in proto.Message) (proto.Message, *Error)
	// empty: a success answers an empty result message.
	empty bool
}

// pb converts with from and to. to nil answers an empty result message
// on success, as Centrifugo's methods whose result has no fields do.
func pb[P proto.Message, Req, Res any, R proto.Message](from func(P) (*Req, *Error), to func(*Res) R) *pbBinding {
	return &pbBinding{
		req: reflect.TypeFor[Req](), res: reflect.TypeFor[Res](), empty: to == nil,
		call: func(run runner, a *handler, ctx context.Context, in proto.Message) (proto.Message, *Error) {
			req, e := from(in.(P))
			if e != nil {
				return nil, e
			}
			res, e := run(a, ctx, req)
			if e != nil || res == nil || to == nil {
				return nil, e
			}
			return to(res.(*Res)), nil
		},
	}
}

// pbEmpty converts the request with from; the result is empty.
func pbEmpty[P proto.Message, Req any](from func(P) (*Req, *Error)) *pbBinding {
	return pb[P, Req, emptyResult, proto.Message](from, nil)
}

// pbCustom runs call instead of the method: for an rpc whose answer is
// not the HTTP method's (Connections).
func pbCustom[P proto.Message, R proto.Message](call func(a *handler, ctx context.Context, in P) (R, *Error)) *pbBinding {
	return &pbBinding{
		call: func(_ runner, a *handler, ctx context.Context, in proto.Message) (proto.Message, *Error) {
			return call(a, ctx, in.(P))
		},
	}
}

// plain adapts a conversion that cannot fail.
func plain[P, Req any](from func(P) *Req) func(P) (*Req, *Error) {
	return func(p P) (*Req, *Error) { return from(p), nil }
}

// methodSet is the method table with what is derived from it: the lookups
// by name and by Command.MethodType number, and the batch command and
// reply types, whose fields are the batchable methods in table order.
type methodSet struct {
	rows   []method
	byName map[string]*method
	byType map[int]*method
	// batch[i] is the method of field i of command and field i+1 of
	// reply (field 0 is the error).
	batch          []*method
	command, reply reflect.Type
}

func newMethodSet() *methodSet {
	s := &methodSet{rows: methodTable(), byName: map[string]*method{}, byType: map[int]*method{}}
	cmdFields := []reflect.StructField{}
	replyFields := []reflect.StructField{{Name: "Error", Type: reflect.TypeFor[*Error](), Tag: `json:"error,omitempty"`}}
	for i := range s.rows {
		m := &s.rows[i]
		s.byName[m.name] = m
		if m.methodType != noMethodType {
			s.byType[m.methodType] = m
		}
		if m.unavailable || !m.batchable {
			continue
		}
		s.batch = append(s.batch, m)
		// encoding/json matches the fields by their tags, as it did the
		// hand-written structs: the first set field in order wins, and a
		// value of the wrong type is named by its path (publish.channel).
		name := "M" + strconv.Itoa(len(s.batch))
		cmdFields = append(cmdFields, reflect.StructField{Name: name, Type: reflect.PointerTo(m.req), Tag: reflect.StructTag(`json:"` + m.name + `"`)})
		replyFields = append(replyFields, reflect.StructField{Name: name, Type: reflect.PointerTo(m.res), Tag: reflect.StructTag(`json:"` + m.name + `,omitempty"`)})
	}
	s.command = reflect.StructOf(cmdFields)
	s.reply = reflect.StructOf(replyFields)
	return s
}

// route is the method served at /api/<name> (and by name at the single
// endpoint and by the Executor), or nil.
func (s *methodSet) route(name string) *method {
	if m := s.byName[name]; m != nil && !m.unavailable {
		return m
	}
	return nil
}
