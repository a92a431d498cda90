package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// The floor of a two-node Redis deployment. With -redis, the server API
// publishes each publication's data into Redis (PUBLISH prefix+channel)
// and answers once Redis has it, and a channel's first subscriber makes
// the floor SUBSCRIBE to it and wait for Redis's confirmation before the
// subscribe reply; what Redis sends goes to the channel's writers as an
// API publication does without -redis. Two floors on one Redis, the API
// on one and the subscribers on the other, take the path Herald's and
// Centrifugo's nodes take in the side-by-side's Redis columns (node 1's
// API, Redis, node 2's fan-out), with nothing added but the relay: no
// history, no ordering checks, no recovery, no reconnect handling beyond
// go-redis's own.

// relayTimeout bounds a publish or a subscription's confirmation.
const relayTimeout = 5 * time.Second

// relay is the floor's Redis connection: a pool for PUBLISH and one
// subscribing connection.
type relay struct {
	client *goredis.Client
	ps     *goredis.PubSub
	prefix string
	log    *slog.Logger

	mu      sync.Mutex
	waiting map[string][]chan struct{} // Redis channel: SUBSCRIBEs awaiting confirmation
}

// dialRelay connects to Redis at addr and checks that it answers.
func dialRelay(addr, prefix string, log *slog.Logger) (*relay, error) {
	client := goredis.NewClient(&goredis.Options{Addr: addr})
	ctx, cancel := context.WithTimeout(context.Background(), relayTimeout)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("redis %s: %w", addr, err)
	}
	return &relay{
		client: client, ps: client.Subscribe(ctx), prefix: prefix, log: log,
		waiting: map[string][]chan struct{}{},
	}, nil
}

// publish sends data to the nodes subscribed to channel.
func (r *relay) publish(ctx context.Context, channel string, data []byte) error {
	ctx, cancel := context.WithTimeout(ctx, relayTimeout)
	defer cancel()
	if err := r.client.Publish(ctx, r.prefix+channel, data).Err(); err != nil {
		return fmt.Errorf("redis publish %q: %w", channel, err)
	}
	return nil
}

// subscribe subscribes to channel and waits until Redis confirms it, so
// that every publication after it reaches this node.
func (r *relay) subscribe(ctx context.Context, channel string) error {
	ctx, cancel := context.WithTimeout(ctx, relayTimeout)
	defer cancel()
	rch := r.prefix + channel
	w := make(chan struct{})
	r.mu.Lock()
	r.waiting[rch] = append(r.waiting[rch], w)
	r.mu.Unlock()
	if err := r.ps.Subscribe(ctx, rch); err != nil {
		r.forget(rch, w)
		return fmt.Errorf("redis subscribe %q: %w", channel, err)
	}
	select {
	case <-w:
		return nil
	case <-ctx.Done():
		r.forget(rch, w)
		return fmt.Errorf("redis subscribe %q: no confirmation: %w", channel, ctx.Err())
	}
}

// forget drops a waiter that gave up.
func (r *relay) forget(rch string, w chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waiting[rch] = slices.DeleteFunc(r.waiting[rch], func(x chan struct{}) bool { return x == w })
	if len(r.waiting[rch]) == 0 {
		delete(r.waiting, rch)
	}
}

// run reads the subscribing connection until ctx ends, handing each
// message to deliver with its channel's name.
func (r *relay) run(ctx context.Context, deliver func(channel string, data []byte)) {
	for {
		msg, err := r.ps.Receive(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, goredis.ErrClosed) {
				return
			}
			// go-redis reconnects and subscribes again by itself.
			r.log.Warn("redis subscribing connection", "error", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		switch m := msg.(type) {
		case *goredis.Message:
			if name, ok := strings.CutPrefix(m.Channel, r.prefix); ok {
				deliver(name, []byte(m.Payload))
			}
		case *goredis.Subscription:
			if m.Kind == "subscribe" {
				r.confirmed(m.Channel)
			}
		}
	}
}

// confirmed releases every SUBSCRIBE of rch waiting for its confirmation.
func (r *relay) confirmed(rch string) {
	r.mu.Lock()
	ws := r.waiting[rch]
	delete(r.waiting, rch)
	r.mu.Unlock()
	for _, w := range ws {
		close(w)
	}
}

func (r *relay) close() error {
	return errors.Join(r.ps.Close(), r.client.Close())
}
