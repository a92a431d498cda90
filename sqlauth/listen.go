package sqlauth

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// listen keeps a connection LISTENing on the invalidation channel, and the
// cache usable only while it does.
func (a *Authorizer) listen(cfg *pgx.ConnConfig) {
	defer a.wg.Done()
	wait := 100 * time.Millisecond
	for a.ctx.Err() == nil {
		err := a.listenOnce(cfg)
		a.cache.setUsable(false)
		if a.ctx.Err() != nil {
			return
		}
		a.log.Warn("invalidation listener lost: answers are not cached until it is back", "error", err, "retry_in", wait)
		select {
		case <-a.ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

func (a *Authorizer) listenOnce(cfg *pgx.ConnConfig) error {
	ctx, cancel := context.WithTimeout(a.ctx, a.cfg.Timeout)
	conn, err := pgx.ConnectConfig(ctx, cfg)
	cancel()
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(a.ctx, "LISTEN "+pgx.Identifier{a.cfg.Channel}.Sanitize()); err != nil {
		return err
	}
	a.cache.setUsable(true)
	for {
		// A quiet connection is pinged now and then, so that a dead one is
		// noticed even when the network says nothing.
		ctx, cancel := context.WithTimeout(a.ctx, 30*time.Second)
		n, err := conn.WaitForNotification(ctx)
		quiet := errors.Is(ctx.Err(), context.DeadlineExceeded)
		cancel()
		switch {
		case err == nil:
			a.cache.invalidate(n.Payload)
		case a.ctx.Err() != nil:
			return nil
		case quiet && !conn.IsClosed():
			pctx, pcancel := context.WithTimeout(a.ctx, a.cfg.Timeout)
			err = conn.Ping(pctx)
			pcancel()
			if err != nil {
				return err
			}
		default:
			return err
		}
	}
}
