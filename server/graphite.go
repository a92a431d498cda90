package server

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/graphite"

	"github.com/heraldhq/herald/config"
)

// graphiteDialTimeout bounds the connection to the Graphite server of one
// push, as Centrifugo 6.9.1's exporter does (internal/metrics/graphite).
const graphiteDialTimeout = time.Second

// graphitePusher pushes the node's registry to Graphite, from start
// until stop.
type graphitePusher struct {
	bridge *graphite.Bridge
	cancel context.CancelFunc
	done   chan struct{}
}

// graphite prepares the pusher of graphite.enabled (the registry is
// built); Start starts it.
func (b *builder) graphite() error {
	p, err := newGraphite(b.s.cfg, b.s.registry, b.s.log)
	b.s.graphite = p
	return err
}

// newGraphite is the pusher of graphite.enabled; nil when off.
func newGraphite(cfg config.Config, g prometheus.Gatherer, log *slog.Logger) (*graphitePusher, error) {
	gc := cfg.Graphite
	if !gc.Enabled {
		return nil, nil
	}
	name := cfg.Name
	if name == "" {
		name, _ = os.Hostname()
	}
	b, err := graphite.NewBridge(&graphite.Config{
		URL:      gc.Address(),
		Prefix:   graphitePrefix(gc.Prefix, name),
		Interval: gc.Interval,
		Timeout:  graphiteDialTimeout,
		UseTags:  gc.Tags,
		Gatherer: g,
		Logger:   graphiteLog{log.With("component", "graphite", "address", gc.Address())},
	})
	if err != nil {
		return nil, fmt.Errorf("graphite: %w", err)
	}
	return &graphitePusher{bridge: b, done: make(chan struct{})}, nil
}

// start pushes every graphite.interval until stop.
func (p *graphitePusher) start() {
	if p == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	go func() {
		defer close(p.done)
		p.bridge.Run(ctx)
	}()
}

// stop ends the pushes; a push under way finishes first, unless ctx ends.
func (p *graphitePusher) stop(ctx context.Context) error {
	if p == nil || p.cancel == nil {
		return nil
	}
	p.cancel()
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("graphite: stop: %w", ctx.Err())
	}
}

// graphitePrefix is Centrifugo's: the prefix without a trailing '.', then
// the node's name as one path component ('.' and non-ASCII runes become
// '_', v6.9.1 internal/app/graphite.go and metrics/graphite).
func graphitePrefix(prefix, node string) string {
	node = strings.Map(func(r rune) rune {
		if r == '.' || r > 0x7f {
			return '_'
		}
		return r
	}, node)
	return strings.TrimSuffix(prefix, ".") + "." + node
}

// graphiteLog hands the bridge's failures (an unreachable server) to the
// node's log.
type graphiteLog struct{ log *slog.Logger }

func (l graphiteLog) Println(v ...any) { l.log.Warn(strings.TrimSpace(fmt.Sprintln(v...))) }
