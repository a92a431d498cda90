package memory

import (
	"sync"

	"github.com/heraldhq/herald/engine"
)

// presenceEntry is one client in one channel, alive until expireAt unless
// added again.
type presenceEntry struct {
	timer
	ch       string
	client   string
	info     *engine.ClientInfo
	expireAt int64
}

// presenceShard holds the presence of the channels that hash to it.
type presenceShard struct {
	mu       sync.Mutex
	channels map[string]map[string]*presenceEntry
	expiry   expiryQueue[*presenceEntry]
}

func (p *presenceShard) add(ch string, info *engine.ClientInfo, expireAt int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	set := p.channels[ch]
	if set == nil {
		set = make(map[string]*presenceEntry)
		p.channels[ch] = set
	}
	e := set[info.Client]
	if e == nil {
		e = &presenceEntry{ch: ch, client: info.Client}
		set[info.Client] = e
	}
	e.info = info
	e.expireAt = expireAt
	p.expiry.schedule(&e.timer, expireAt, e)
}

func (p *presenceShard) remove(ch, client string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.channels[ch][client]; e != nil {
		p.drop(e)
	}
}

// drop forgets e, and its channel once the channel is empty, so that
// channels nobody is in cost nothing.
func (p *presenceShard) drop(e *presenceEntry) {
	e.cancel()
	set := p.channels[e.ch]
	delete(set, e.client)
	if len(set) == 0 {
		delete(p.channels, e.ch)
	}
}

// live returns ch's entries that have not expired, dropping those that have.
// The caller holds p.mu.
func (p *presenceShard) live(ch string, now int64, visit func(*presenceEntry)) {
	for _, e := range p.channels[ch] {
		if e.expireAt <= now {
			p.drop(e) // deleting during range is allowed in Go
			continue
		}
		visit(e)
	}
}

func (p *presenceShard) presence(ch string, now int64) map[string]*engine.ClientInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]*engine.ClientInfo, len(p.channels[ch]))
	p.live(ch, now, func(e *presenceEntry) { out[e.client] = e.info })
	return out
}

// stats counts clients and distinct user ids. As in Centrifugo, anonymous
// clients (user "") together count as one user.
func (p *presenceShard) stats(ch string, now int64) engine.PresenceStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	users := make(map[string]struct{}, len(p.channels[ch]))
	var st engine.PresenceStats
	p.live(ch, now, func(e *presenceEntry) {
		st.NumClients++
		users[e.info.User] = struct{}{}
	})
	st.NumUsers = len(users)
	return st
}

// sweep handles at most budget due deadlines and returns how many it
// handled.
func (p *presenceShard) sweep(now int64, budget int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for n < budget {
		d, ok := p.expiry.popDue(now)
		if !ok {
			break
		}
		n++
		e := d.item
		if !e.fire(d.gen) {
			continue
		}
		if e.expireAt <= now {
			p.drop(e)
			continue
		}
		p.expiry.schedule(&e.timer, e.expireAt, e)
	}
	return n
}
