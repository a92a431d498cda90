package admin

import (
	"net"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// loginLimiter rate-limits login attempts per client IP, against password
// guessing.
type loginLimiter struct {
	burst int
	every time.Duration
	mu    sync.Mutex
	ips   map[string]*ipLimit
}

type ipLimit struct {
	lim  *rate.Limiter
	seen time.Time
}

// maxTrackedIPs bounds the limiter's memory; past it, IPs not seen for a
// full refill are forgotten (their bucket would be full again anyway).
const maxTrackedIPs = 10000

func newLoginLimiter(burst int, every time.Duration) *loginLimiter {
	return &loginLimiter{burst: burst, every: every, ips: make(map[string]*ipLimit)}
}

// allow takes one attempt for the client at remoteAddr (host:port).
func (l *loginLimiter) allow(remoteAddr string) bool {
	ip, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		ip = remoteAddr
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.ips[ip]
	if e == nil {
		if len(l.ips) >= maxTrackedIPs {
			full := l.every * time.Duration(l.burst)
			for k, v := range l.ips {
				if now.Sub(v.seen) > full {
					delete(l.ips, k)
				}
			}
		}
		e = &ipLimit{lim: rate.NewLimiter(rate.Every(l.every), l.burst)}
		l.ips[ip] = e
	}
	e.seen = now
	return e.lim.AllowN(now, 1)
}
