package postgres

import (
	"context"
	"fmt"
	"math"
	"time"
)

// mapExpiryInterval is how often the earliest map key expiry is looked up,
// unless JanitorInterval is shorter: a key whose expiry was not known at
// the last lookup goes within about this long of it. A key that was known
// goes at its expiry (runMapJanitor waits for it).
const mapExpiryInterval = 250 * time.Millisecond

// mapExpiryRetry is the first wait before sweeping again keys that stay
// due after a sweep: another node may be removing them (the sweep's
// advisory lock) or changes may hold their channel past the sweep's wait
// for its lock (lock_timeout 500 ms, schema version 21), and the janitor
// must not spin meanwhile. It doubles up to the interval
// while they stay due.
const mapExpiryRetry = 20 * time.Millisecond

// runMapJanitor removes expired map keys: it looks up the earliest expiry
// (one indexed read, no transaction), waits until then or
// mapExpiryInterval, and removes every due key in statements of
// sweepMapKeysBatch keys (each its own short transaction). Before, it
// swept on a 250 ms tick whatever was due, so keys waited up to a tick
// after their expiry before the first statement began; and before that
// the map keys shared the janitor's tick and its bound of sweepRounds
// statements: 30,000 keys expiring together were removed up to 15 s late.
func (e *Engine) runMapJanitor() {
	interval := min(e.opts.JanitorInterval, mapExpiryInterval)
	timer := time.NewTimer(interval)
	defer timer.Stop()
	var down outage
	swept := false // the previous round swept
	retry := mapExpiryRetry
	for {
		select {
		case <-e.bgCtx.Done():
			return
		case <-timer.C:
		}
		wait := interval
		next, err := e.nextMapExpiry()
		switch {
		case err != nil:
			swept = false
		case next > 0:
			swept, retry = false, mapExpiryRetry
			wait = min(next, interval)
		case !swept:
			err = e.sweepUpTo("expired map keys", e.mapSQL.sweepKeys, sweepMapKeysBatch, math.MaxInt)
			// Look again at once: whether any are left, when the next are due.
			swept, wait = true, 0
		default:
			// Still due right after a sweep: another node is removing them
			// or a change holds their channel. Longer each time it repeats.
			swept, wait = false, retry
			retry = min(2*retry, interval)
		}
		switch {
		case err == nil:
			down.recovered(e.log, "map key expiry works again")
		case e.bgCtx.Err() == nil:
			down.fail(e.log, "map key expiry failed", "error", err)
			wait = interval
		}
		timer.Reset(wait)
	}
}

// nextMapExpiry is the time until the earliest map key expiry, at most
// an hour; zero or less when one is due, an hour when no key has a TTL.
func (e *Engine) nextMapExpiry() (time.Duration, error) {
	ctx, cancel := context.WithTimeout(e.bgCtx, e.opts.WriteTimeout)
	defer cancel()
	var secs *float64
	if err := e.qPool.QueryRow(ctx, e.mapSQL.nextExpiry).Scan(&secs); err != nil {
		return 0, fmt.Errorf("earliest map key expiry: %w", err)
	}
	if secs == nil || *secs > 3600 {
		return time.Hour, nil
	}
	return time.Duration(*secs * float64(time.Second)), nil
}
