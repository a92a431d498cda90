// Package postgres is the engine that scales Herald out on PostgreSQL
// alone: publications, join/leave events and control messages travel
// between nodes through LISTEN/NOTIFY, history lives in tables with
// per-channel offsets and epochs, and presence is a table with expiry.
//
// Each node holds one listening connection on a fixed set of notification
// channels and a small publishing pool that batches concurrent
// publications into one transaction. Offsets let a node see a gap and
// refill it from the history table, and after its listening connection
// drops it replays what it missed before resuming live delivery, so
// channels with history lose nothing; channels without history are
// at-most-once. docs/postgres.md describes the design and its limits.
package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/internal/precheck"
)

// ErrNotStarted is returned by calls made before Start.
var ErrNotStarted = errors.New("postgres engine not started")

// Engine is the PostgreSQL engine.Engine. Create it with New.
type Engine struct {
	opts       Config
	log        *slog.Logger
	sql        *statements
	mapSQL     mapStatements
	mapChecked mapCheckedStatements
	stSQL      storeStatements
	csSQL      channelStateStatements // channelstate.go
	pubPool    *pgxpool.Pool
	qPool      *pgxpool.Pool
	listenC    *pgx.ConnConfig
	metrics    *metrics
	logical    *logicalMetrics
	seed       maphash.Seed

	// token and seq make every notification payload unique (see codec.go).
	token string
	seq   atomic.Uint64

	batcher *batcher
	shards  []*shard
	control *shard
	// allShards is shards and control, for work that concerns every queue.
	allShards []*shard

	// life is closed and started; every call but Start and Close checks
	// it. Even reads need Start, which migrates the schema.
	life precheck.State

	lifecycleMu sync.Mutex
	isStarted   bool
	bgCtx       context.Context
	bgCancel    context.CancelFunc
	writers     sync.WaitGroup
	workers     sync.WaitGroup
}

var _ engine.Engine = (*Engine)(nil)

// New checks opts and prepares the connection pools; it does not connect
// until Start.
func New(ctx context.Context, opts Config) (*Engine, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &Engine{
		opts:       opts,
		log:        opts.Logger.With("engine", "postgres", "node", opts.NodeID),
		sql:        newStatements(opts.Schema, opts.NodeID),
		mapSQL:     newMapStatements(func(s string) string { return strings.ReplaceAll(s, "{{schema}}", opts.Schema) }),
		mapChecked: newMapCheckedStatements(func(s string) string { return strings.ReplaceAll(s, "{{schema}}", opts.Schema) }),
		stSQL:      newStoreStatements(func(s string) string { return strings.ReplaceAll(s, "{{schema}}", opts.Schema) }),
		csSQL:      newChannelStateStatements(opts.Schema),
		seed:       maphash.MakeSeed(),
		token:      randomToken(6),
	}
	e.metrics = newMetrics(opts.NodeID, e.dispatchDepth)
	e.logical = newLogicalMetrics(opts.NodeID)
	if e.pubPool, err = newPool(ctx, opts.DSN, int32(opts.PoolSize), "herald-publish:"+opts.NodeID); err != nil {
		return nil, fmt.Errorf("postgres engine: publishing pool: %w", err)
	}
	if e.qPool, err = newPool(ctx, opts.DSN, int32(opts.QueryPoolSize), "herald-query:"+opts.NodeID); err != nil {
		e.pubPool.Close()
		return nil, fmt.Errorf("postgres engine: query pool: %w", err)
	}
	if e.listenC, err = pgx.ParseConfig(opts.ListenDSN); err != nil {
		e.pubPool.Close()
		e.qPool.Close()
		return nil, fmt.Errorf("postgres engine: listen DSN: %w", err)
	}
	e.listenC.RuntimeParams["application_name"] = listenerAppName(opts.NodeID)
	e.batcher = newBatcher(opts.PoolSize, opts.MaxBatch, opts.MaxBatchBytes)
	e.shards = make([]*shard, opts.Shards)
	for i := range e.shards {
		e.shards[i] = e.newShard()
	}
	e.control = e.newShard()
	e.allShards = append(append([]*shard(nil), e.shards...), e.control)
	return e, nil
}

func newPool(ctx context.Context, dsn string, size int32, app string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = size
	cfg.ConnConfig.RuntimeParams["application_name"] = app
	return pgxpool.NewWithConfig(ctx, cfg)
}

// warm opens n connections of pool, so that the first publications do not
// wait for connection setup and a wrong DSN fails Start.
func warm(ctx context.Context, pool *pgxpool.Pool, n int) error {
	conns := make([]*pgxpool.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Release()
		}
	}()
	for range n {
		c, err := pool.Acquire(ctx)
		if err != nil {
			return err
		}
		conns = append(conns, c)
	}
	return nil
}

// listenerAppName is the application_name of a node's listening
// connection, which lets operators (and tests) find its backend.
func listenerAppName(nodeID string) string { return "herald-listen:" + nodeID }

// NodeID returns the id this node has in the nodes and presence tables.
func (e *Engine) NodeID() string { return e.opts.NodeID }

// Collectors returns the engine's Prometheus collectors for the server to
// register.
func (e *Engine) Collectors() []prometheus.Collector {
	return append(e.metrics.collectors(), e.logical.collectors()...)
}

// Start migrates the schema (unless Config.SkipMigrate), opens the
// listening connection and starts delivering to h. It returns once
// publications will reach h.
func (e *Engine) Start(ctx context.Context, h engine.Handler) error {
	if h == nil {
		return errors.New("start postgres engine: nil handler")
	}
	e.lifecycleMu.Lock()
	defer e.lifecycleMu.Unlock()
	if e.life.Closed.Load() {
		return fmt.Errorf("start postgres engine: %w", engine.ErrClosed)
	}
	if e.isStarted {
		return errors.New("start postgres engine: already started")
	}
	if !e.opts.SkipMigrate {
		err := e.qPool.AcquireFunc(ctx, func(c *pgxpool.Conn) error { return migrate(ctx, c.Conn(), e.opts.Schema) })
		if err != nil {
			return fmt.Errorf("start postgres engine: %w", err)
		}
	}
	if err := warm(ctx, e.pubPool, e.opts.PoolSize); err != nil {
		return fmt.Errorf("start postgres engine: publishing pool: %w", err)
	}
	conn, err := e.connectListener(ctx)
	if err != nil {
		return fmt.Errorf("start postgres engine: %w", err)
	}
	e.isStarted = true
	e.bgCtx, e.bgCancel = context.WithCancel(context.Background())
	for _, s := range e.allShards {
		e.workers.Go(func() { s.Run(h) })
	}
	e.workers.Go(func() { e.runListener(conn) })
	for _, q := range e.batcher.queues {
		e.writers.Go(func() { e.runWriter(q) })
	}
	e.workers.Go(e.runJanitor)
	e.workers.Go(e.runMapJanitor)
	e.workers.Go(e.runMonitor)
	if e.opts.Logical.Enabled {
		e.workers.Go(e.runLogical)
	}
	e.life.Ready.Store(true)
	return nil
}

// Close stops delivery, waits for publishing transactions and deliveries
// in progress and closes the connections. Later calls return
// engine.ErrClosed; closing twice is harmless.
func (e *Engine) Close() error {
	e.lifecycleMu.Lock()
	defer e.lifecycleMu.Unlock()
	if e.life.Closed.Swap(true) {
		return nil
	}
	e.batcher.close()
	e.writers.Wait()
	if e.isStarted {
		e.bgCancel()
		for _, s := range e.allShards {
			s.Stop()
		}
		e.workers.Wait()
	}
	e.pubPool.Close()
	e.qPool.Close()
	return nil
}

// shardOf returns the delivery shard that owns ch.
func (e *Engine) shardOf(ch string) *shard {
	return e.shards[maphash.String(e.seed, ch)%uint64(len(e.shards))]
}

func (e *Engine) dispatchDepth() float64 {
	n := 0
	for _, s := range e.allShards {
		n += s.Depth()
	}
	return float64(n)
}

func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails since Go 1.24
	return hex.EncodeToString(b)
}
