//go:build linux

package websocket

import (
	"sync"
	"time"
)

// reaper enforces Config.ReadTimeout. Only connections with a message
// half-read are tracked, so idle ones cost nothing; one goroutine checks the
// deadlines a few times per ReadTimeout.
type reaper struct {
	every time.Duration
	mu    sync.Mutex
	dl    map[*Conn]time.Time
	done  chan struct{}
	once  sync.Once
}

func newReaper(timeout time.Duration) *reaper {
	every := min(max(timeout/4, 10*time.Millisecond), time.Second)
	return &reaper{every: every, dl: make(map[*Conn]time.Time), done: make(chan struct{})}
}

func (r *reaper) track(c *Conn, deadline time.Time) {
	r.mu.Lock()
	r.dl[c] = deadline
	r.mu.Unlock()
}

func (r *reaper) untrack(c *Conn) {
	r.mu.Lock()
	delete(r.dl, c)
	r.mu.Unlock()
}

func (r *reaper) run() {
	t := time.NewTicker(r.every)
	defer t.Stop()
	var expired []*Conn
	for {
		select {
		case <-r.done:
			return
		case now := <-t.C:
			expired = r.expired(now, expired[:0])
			for _, c := range expired {
				c.srv.log.Info("websocket read timeout", "remote", c.RemoteAddr())
				c.Close(closePolicyViolation, "read timeout")
			}
			clear(expired)
		}
	}
}

// expired removes and returns the connections whose deadline has passed.
func (r *reaper) expired(now time.Time, dst []*Conn) []*Conn {
	r.mu.Lock()
	defer r.mu.Unlock()
	for c, dl := range r.dl {
		if now.After(dl) {
			dst = append(dst, c)
			delete(r.dl, c)
		}
	}
	return dst
}

func (r *reaper) stop() { r.once.Do(func() { close(r.done) }) }
