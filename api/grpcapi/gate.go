package grpcapi

import (
	"context"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/tap"
)

// streamGate admits a call when its headers arrive and bounds the time its
// request message takes to come.
//
// grpc-go reads a unary call's whole message before any interceptor runs,
// so a key check in an interceptor lets a client without a key make the
// server hold a message of up to MaxReceiveMessageSize per stream for as
// long as the client likes. The tap handle runs on the headers, before a
// byte of the message is read: a call without the key is refused there
// and its stream reset, and an admitted call gets a context that is
// cancelled when its message has not arrived within ReadTimeout. grpc-go
// reads the message through that context, so the read ends, the call
// answers DeadlineExceeded and its stream is reset, freeing what was
// buffered. The stats handler stops the timer once the message is in.
//
// As the stats handler it also gives every connection its send watch
// (sendwatch.go).
type streamGate struct {
	key         []byte // nil: no key needed (Insecure)
	readTimeout time.Duration
	sendTimeout time.Duration
	conns       *connRegistry
}

func newStreamGate(cfg Config, conns *connRegistry) *streamGate {
	g := &streamGate{readTimeout: cfg.ReadTimeout, sendTimeout: cfg.SendTimeout, conns: conns}
	if !cfg.Insecure {
		g.key = []byte(cfg.Key)
	}
	return g
}

// tap is the grpc.InTapHandle.
func (g *streamGate) tap(ctx context.Context, info *tap.Info) (context.Context, error) {
	if g.key != nil && !mdHasKey(info.Header, g.key) {
		return nil, errUnauthenticated
	}
	parent, cancel := context.WithCancel(ctx)
	rc := &readCtx{Context: parent}
	rc.timer = time.AfterFunc(g.readTimeout, func() {
		rc.expired.Store(true)
		cancel()
	})
	return rc, nil
}

// readCtx is an admitted call's context: cancelled, with Err
// DeadlineExceeded, when the request message was late. A deadline would
// also bound the method once the message is in, so the timer is stopped
// instead when it arrives.
type readCtx struct {
	context.Context
	timer   *time.Timer
	expired atomic.Bool
}

// Err is context.DeadlineExceeded when the read timed out, so that the
// client is told why (grpc-go answers the read's error).
func (c *readCtx) Err() error {
	if c.expired.Load() {
		return context.DeadlineExceeded
	}
	return c.Context.Err()
}

// Value finds the readCtx itself for the stats handler, whose contexts
// derive from it.
func (c *readCtx) Value(key any) any {
	if key == (readCtxKey{}) {
		return c
	}
	return c.Context.Value(key)
}

type readCtxKey struct{}

// HandleRPC stops the read timer when the call's message has arrived (a
// streaming call's first one: the reflection service's later messages
// are bounded by the idle and keepalive policy) or the call ended, and
// tells the connection's send watch of each response message queued.
func (g *streamGate) HandleRPC(ctx context.Context, s stats.RPCStats) {
	switch s := s.(type) {
	case *stats.InPayload, *stats.End:
		if rc, ok := ctx.Value(readCtxKey{}).(*readCtx); ok {
			rc.timer.Stop()
		}
	case *stats.OutPayload:
		if w, ok := ctx.Value(sendWatchKey{}).(*sendWatch); ok {
			w.queuedPayload(s.WireLength)
		}
	}
}

func (g *streamGate) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }

type sendWatchKey struct{}

// TagConn gives a connection accepted by the Server's listener its send
// watch; the streams' contexts derive from the one returned.
func (g *streamGate) TagConn(ctx context.Context, info *stats.ConnTagInfo) context.Context {
	if info.RemoteAddr == nil || info.LocalAddr == nil {
		return ctx
	}
	wc := g.conns.take(connKey{info.RemoteAddr.String(), info.LocalAddr.String()})
	if wc == nil {
		return ctx // served from a listener that is not the Server's
	}
	return context.WithValue(ctx, sendWatchKey{}, &sendWatch{conn: wc, timeout: g.sendTimeout})
}

// HandleConn ends the connection's send watch with the connection.
func (g *streamGate) HandleConn(ctx context.Context, s stats.ConnStats) {
	if _, ok := s.(*stats.ConnEnd); ok {
		if w, ok := ctx.Value(sendWatchKey{}).(*sendWatch); ok {
			w.stop()
		}
	}
}
