package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// connectListener opens the node's one listening connection and LISTENs
// on every notification channel.
func (e *Engine) connectListener(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, e.listenC)
	if err != nil {
		return nil, fmt.Errorf("connect listener: %w", err)
	}
	if _, err := conn.Exec(ctx, e.sql.listen); err != nil {
		_ = conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("listen: %w", err)
	}
	return conn, nil
}

// runListener reads notifications until the engine closes. When the
// connection drops it reconnects with backoff and, before reading from the
// new connection, queues a replay on every shard: the replay reads what was
// committed while nobody listened, and anything the new connection
// delivers is queued behind it, so each channel resumes in order and
// without duplicates.
func (e *Engine) runListener(conn *pgx.Conn) {
	for {
		err := e.listen(conn)
		_ = conn.Close(context.Background())
		if e.bgCtx.Err() != nil {
			return
		}
		e.log.Warn("listening connection lost, reconnecting", "error", err)
		if conn = e.reconnectListener(); conn == nil {
			return
		}
		e.metrics.reconnects.Inc()
		for _, s := range e.shards {
			s.ResyncAll()
		}
		e.log.Info("listening connection restored; replaying missed publications")
	}
}

// reconnectListener retries with exponential backoff until it connects or
// the engine closes (then it returns nil).
func (e *Engine) reconnectListener() *pgx.Conn {
	for attempt := 1; ; attempt++ {
		wait := e.backoff(attempt)
		select {
		case <-e.bgCtx.Done():
			return nil
		case <-time.After(wait):
		}
		ctx, cancel := context.WithTimeout(e.bgCtx, e.opts.WriteTimeout)
		conn, err := e.connectListener(ctx)
		cancel()
		if err == nil {
			return conn
		}
		if e.bgCtx.Err() != nil {
			return nil
		}
		e.log.Debug("listener reconnect failed", "error", err, "retry_in", wait)
	}
}

// listen reads from conn until it fails or the engine closes. A quiet
// connection is pinged every ListenerPing, so a dead peer is noticed even
// when the network never says so.
func (e *Engine) listen(conn *pgx.Conn) error {
	for {
		ctx, cancel := context.WithTimeout(e.bgCtx, e.opts.ListenerPing)
		n, err := conn.WaitForNotification(ctx)
		cancel()
		if err == nil {
			e.route(n)
			continue
		}
		if e.bgCtx.Err() != nil {
			return err
		}
		if !errors.Is(err, context.DeadlineExceeded) || conn.IsClosed() {
			return err
		}
		pctx, pcancel := context.WithTimeout(e.bgCtx, e.opts.ListenerPing)
		err = conn.Ping(pctx)
		pcancel()
		if err != nil {
			return fmt.Errorf("ping: %w", err)
		}
	}
}

// route decodes a notification and queues its records on their shards. It
// does no I/O and never waits for the handler.
func (e *Engine) route(n *pgconn.Notification) {
	now := time.Now().UnixMilli()
	d := decoder{s: n.Payload}
	for d.more() {
		r, err := d.next()
		if err != nil {
			e.metrics.malformed.Inc()
			e.log.Error("undecodable notification", "channel", n.Channel, "error", err)
			return
		}
		switch {
		case r.kind == kindControl, r.kind == kindRef && r.channel == "":
			e.control.Deliver("", r)
		default:
			if r.kind == kindPub {
				e.metrics.listenerLag.Observe(float64(now-r.pub.Time) / 1000)
			}
			e.shardOf(r.channel).Deliver(r.channel, r)
		}
	}
}

// backoff is the wait before retry number n (from 1) of the listener's
// reconnect and of the shards' reads: doubling from ReconnectMin up to
// ReconnectMax, spread by ±20% so that nodes that lost PostgreSQL together
// do not retry in lockstep.
func (e *Engine) backoff(n int) time.Duration {
	d := e.opts.ReconnectMin
	for i := 1; i < n && d < e.opts.ReconnectMax; i++ {
		d *= 2
	}
	d = min(d, e.opts.ReconnectMax)
	return d + time.Duration((rand.Float64()*0.4-0.2)*float64(d))
}
