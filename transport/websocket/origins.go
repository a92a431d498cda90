package websocket

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// refusedOrigins decides which refused upgrades are logged. A page served
// from another origin (a dev server on another port, say) gets 403 and
// retries; one warning per origin per interval is enough to explain it,
// and a global limit keeps a flood of made-up origins from flooding the
// log.
type refusedOrigins struct {
	interval time.Duration
	global   *rate.Limiter

	mu   sync.Mutex
	last map[string]time.Time // origin → when it was last logged
}

const (
	// refusedOriginInterval is how often one origin is logged at most.
	refusedOriginInterval = time.Minute
	// maxTrackedOrigins bounds the memory of the per-origin table.
	maxTrackedOrigins = 1024
)

func newRefusedOrigins() *refusedOrigins {
	return &refusedOrigins{
		interval: refusedOriginInterval,
		// Ten distinct origins at once, then one a second.
		global: rate.NewLimiter(rate.Every(time.Second), 10),
		last:   make(map[string]time.Time),
	}
}

// shouldLog reports whether a refusal of origin at now is to be logged.
func (o *refusedOrigins) shouldLog(origin string, now time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if t, ok := o.last[origin]; ok && now.Sub(t) < o.interval {
		return false
	}
	if !o.global.AllowN(now, 1) {
		return false
	}
	if len(o.last) >= maxTrackedOrigins {
		for k, t := range o.last {
			if now.Sub(t) >= o.interval {
				delete(o.last, k)
			}
		}
		if len(o.last) >= maxTrackedOrigins {
			// Every entry is recent: the global limit alone bounds the
			// log until they age.
			clear(o.last)
		}
	}
	o.last[origin] = now
	return true
}
