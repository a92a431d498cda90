package redis

import (
	"net"
	"strings"
	"sync"

	goredis "github.com/redis/go-redis/v9"
)

// When the Sentinels promote a replica, go-redis moves its command
// connections to the new master, but a subscribing connection stays where
// it is: on the old master, which hears nothing the new one publishes,
// until the Sentinels reconfigure it as a replica and close its clients
// (seconds later, or never while it is cut off from them). So a node
// listens to every Sentinel for +switch-master itself and moves its
// subscribing connections at once; the new connections' confirmations
// replay what was missed, as after any reconnect.

// switchWatch remembers the master the subscribing connections were last
// moved to, so that the same switch announced by several Sentinels moves
// them once.
type switchWatch struct {
	mu     sync.Mutex
	master string
	subs   []*goredis.PubSub
}

// watchSentinels starts one watcher per Sentinel address.
func (e *Engine) watchSentinels() {
	for _, addr := range e.opts.Addrs {
		sc := goredis.NewSentinelClient(&goredis.Options{
			Addr:                  addr,
			Username:              e.opts.SentinelUsername,
			Password:              e.opts.SentinelPassword,
			TLSConfig:             e.opts.TLS,
			Protocol:              2,
			ContextTimeoutEnabled: true,
		})
		ps := sc.Subscribe(e.bgCtx) // no I/O yet
		e.switches.mu.Lock()
		e.switches.subs = append(e.switches.subs, ps)
		e.switches.mu.Unlock()
		e.workers.Go(func() {
			defer sc.Close()
			// Here rather than in Start, which an unreachable Sentinel
			// would hold up. go-redis keeps the channel even when this
			// first SUBSCRIBE fails, and sends it on every reconnect.
			_ = ps.Subscribe(e.bgCtx, "+switch-master")
			e.watchSwitches(ps)
		})
	}
}

// watchSwitches reads +switch-master events from one Sentinel until the
// engine closes; go-redis reconnects the subscription when it breaks.
func (e *Engine) watchSwitches(ps *goredis.PubSub) {
	failures := 0
	for {
		msg, err := ps.ReceiveMessage(e.bgCtx)
		if err != nil {
			if e.bgCtx.Err() != nil {
				return
			}
			failures++
			if !e.pause(e.backoff(failures)) {
				return
			}
			continue
		}
		failures = 0
		// "<master name> <old ip> <old port> <new ip> <new port>"
		f := strings.Fields(msg.Payload)
		if len(f) != 5 || f[0] != e.opts.SentinelMaster {
			continue
		}
		e.masterSwitched(net.JoinHostPort(f[3], f[4]))
	}
}

// masterSwitched moves every subscribing connection to the new master,
// once per switch.
func (e *Engine) masterSwitched(addr string) {
	e.switches.mu.Lock()
	moved := e.switches.master == addr
	e.switches.master = addr
	e.switches.mu.Unlock()
	if moved {
		return
	}
	for _, s := range e.subs {
		s.replace("Sentinel promoted a new master, moved subscribing connection to " + addr)
	}
}

// closeSentinelWatch ends the watchers' subscriptions.
func (e *Engine) closeSentinelWatch() {
	e.switches.mu.Lock()
	defer e.switches.mu.Unlock()
	for _, ps := range e.switches.subs {
		_ = ps.Close()
	}
}
