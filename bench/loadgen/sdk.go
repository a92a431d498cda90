//go:build benchsdk

// The SDK client is built only on request: centrifuge-go's generated
// Protobuf types register the file client.proto, as this project's
// protocol package does, and the Protobuf registry panics at start-up on
// the conflict unless its policy is "warn":
//
//	go build -C bench -tags benchsdk \
//	  -ldflags=-X=google.golang.org/protobuf/reflect/protoregistry.conflictPolicy=warn \
//	  -o .tmp/bin/herald-bench-sdk ./cmd/herald-bench
//
// (or GOLANG_PROTOBUF_REGISTRATION_CONFLICT=warn in the environment).
// Neither side's messages go through the registry here, so the conflict
// is harmless.

package loadgen

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	centrifuge "github.com/centrifugal/centrifuge-go"

	"github.com/heraldhq/herald/protocol"
)

// sdkConn is a ClientSDK connection: a centrifuge-go client with one
// subscription per channel of the pool.
type sdkConn struct {
	pool    *Pool
	cl      *centrifuge.Client
	up      atomic.Bool // subscribed to every channel
	closing atomic.Bool
	end     ownedEnd
}

// dialSDK connects a centrifuge-go client as connection i and waits until
// it is subscribed to every channel. The SDK reads on goroutines of its
// own from the start, so start does nothing.
func (p *Pool) dialSDK(ctx context.Context, i, sub int) (ownedConn, func(), error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	tok, err := p.connectToken(i)
	if err != nil {
		return nil, nil, err
	}
	u := p.urls[i%len(p.urls)]
	cfg := centrifuge.Config{
		Token: tok, Name: "herald-bench", NetDialContext: p.dialer(i).DialContext, HandshakeTimeout: p.cfg.Timeout,
		LogLevel: centrifuge.LogLevelNone,
	}
	c := &sdkConn{pool: p}
	if p.cfg.Format == protocol.TypeProtobuf {
		c.cl = centrifuge.NewProtobufClient(u.String(), cfg)
	} else {
		c.cl = centrifuge.NewJsonClient(u.String(), cfg)
	}
	var (
		mu      sync.Mutex
		lastErr error
	)
	note := func(err error) {
		mu.Lock()
		lastErr = err
		mu.Unlock()
	}
	c.cl.OnError(func(e centrifuge.ErrorEvent) { note(e.Error) })
	// A client that stops being connected after it was subscribed is a
	// lost connection, as for the other clients: it is closed rather than
	// left to reconnect, so that what it misses counts as missing.
	c.cl.OnConnecting(func(e centrifuge.ConnectingEvent) {
		c.lost(fmt.Errorf("reconnecting: %d %s", e.Code, e.Reason))
	})
	c.cl.OnDisconnected(func(e centrifuge.DisconnectedEvent) {
		c.lost(fmt.Errorf("disconnected: %d %s", e.Code, e.Reason))
	})
	subscribed := make(chan struct{}, len(p.cfg.Channels))
	for _, ch := range p.cfg.Channels {
		s, err := c.cl.NewSubscription(ch)
		if err != nil {
			c.cl.Close()
			return nil, nil, fmt.Errorf("subscription %q: %w", ch, err)
		}
		s.OnSubscribed(func(centrifuge.SubscribedEvent) { subscribed <- struct{}{} })
		s.OnError(func(e centrifuge.SubscriptionErrorEvent) { note(fmt.Errorf("subscribe %q: %w", ch, e.Error)) })
		s.OnPublication(func(e centrifuge.PublicationEvent) { p.deliver(sub, ch, e.Data) })
		if err := s.Subscribe(); err != nil {
			c.cl.Close()
			return nil, nil, fmt.Errorf("subscribe %q: %w", ch, err)
		}
	}
	if err := c.cl.Connect(); err != nil {
		c.cl.Close()
		return nil, nil, fmt.Errorf("connect: %w", err)
	}
	for range p.cfg.Channels {
		select {
		case <-subscribed:
		case <-ctx.Done():
			c.closing.Store(true)
			c.cl.Close()
			mu.Lock()
			defer mu.Unlock()
			return nil, nil, fmt.Errorf("not subscribed in %v: %w", p.cfg.Timeout, errors.Join(ctx.Err(), lastErr))
		}
	}
	c.up.Store(true)
	return c, func() {}, nil
}

// lost ends a subscribed connection the server (or the network) closed.
func (c *sdkConn) lost(cause error) {
	if !c.up.Load() || c.closing.Load() {
		return
	}
	c.end.finish(c.pool, c, false, cause)
	// Not from the SDK's event handler, which Close waits for.
	go c.cl.Close()
}

// close disconnects the client.
func (c *sdkConn) close() {
	if c.closing.CompareAndSwap(false, true) {
		c.cl.Close()
	}
	c.end.finish(c.pool, c, true, nil)
}
