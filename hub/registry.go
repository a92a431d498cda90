package hub

import (
	"hash/maphash"
	"sync"
)

// registryShards spreads channels over independently locked maps so that
// subscribing in one channel does not wait on fan-out in another.
const registryShards = 64

// registry maps each channel with local subscribers to them.
type registry struct {
	seed   maphash.Seed
	shards [registryShards]registryShard
}

type registryShard struct {
	mu       sync.RWMutex
	channels map[string]map[*Client]*subscription
}

func (r *registry) init() {
	r.seed = maphash.MakeSeed()
	for i := range r.shards {
		r.shards[i].channels = make(map[string]map[*Client]*subscription)
	}
}

func (r *registry) shard(ch string) *registryShard {
	return &r.shards[maphash.String(r.seed, ch)%registryShards]
}

// add registers s and reports whether it is the channel's first local
// subscriber (the node must then declare interest to the engine), and the
// subscription of c it replaced, if any.
func (r *registry) add(c *Client, s *subscription) (first bool, replaced *subscription) {
	sh := r.shard(s.channel)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	m := sh.channels[s.channel]
	if m == nil {
		m = make(map[*Client]*subscription, 1)
		sh.channels[s.channel] = m
		first = true
	}
	replaced = m[c]
	m[c] = s
	return first, replaced
}

// remove unregisters c from ch and returns the subscription it removed
// (nil if none) and whether ch has no local subscriber left.
func (r *registry) remove(c *Client, ch string) (removed *subscription, last bool) {
	sh := r.shard(ch)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	m := sh.channels[ch]
	if m == nil {
		return nil, false
	}
	removed = m[c]
	delete(m, c)
	if len(m) == 0 {
		delete(sh.channels, ch)
		return removed, true
	}
	return removed, false
}

// each calls fn for every local subscriber of ch, under the shard's read
// lock: fn must not block.
func (r *registry) each(ch string, fn func(c *Client, s *subscription)) {
	sh := r.shard(ch)
	sh.mu.RLock()
	for c, s := range sh.channels[ch] {
		fn(c, s)
	}
	sh.mu.RUnlock()
}

// some reports whether fn holds for a local subscriber of ch, stopping at
// the first; fn runs under the shard's read lock and must not block.
func (r *registry) some(ch string, fn func(c *Client) bool) bool {
	sh := r.shard(ch)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	for c := range sh.channels[ch] {
		if fn(c) {
			return true
		}
	}
	return false
}

// count is the number of local subscribers of ch.
func (r *registry) count(ch string) int {
	sh := r.shard(ch)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	return len(sh.channels[ch])
}

func (r *registry) has(ch string) bool {
	sh := r.shard(ch)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	return sh.channels[ch] != nil
}

func (r *registry) numChannels() int {
	n := 0
	for i := range r.shards {
		r.shards[i].mu.RLock()
		n += len(r.shards[i].channels)
		r.shards[i].mu.RUnlock()
	}
	return n
}

func (r *registry) numSubscriptions() int {
	n := 0
	for i := range r.shards {
		r.shards[i].mu.RLock()
		for _, m := range r.shards[i].channels {
			n += len(m)
		}
		r.shards[i].mu.RUnlock()
	}
	return n
}

func (r *registry) channels() map[string]int {
	out := make(map[string]int)
	for i := range r.shards {
		r.shards[i].mu.RLock()
		for ch, m := range r.shards[i].channels {
			out[ch] = len(m)
		}
		r.shards[i].mu.RUnlock()
	}
	return out
}

// userIndex maps users to their connected clients on this node, for
// disconnect, unsubscribe and refresh by user.
type userIndex struct {
	mu    sync.RWMutex
	users map[string]map[*Client]struct{}
}

func (u *userIndex) init() { u.users = make(map[string]map[*Client]struct{}) }

func (u *userIndex) add(user string, c *Client) {
	u.mu.Lock()
	defer u.mu.Unlock()
	m := u.users[user]
	if m == nil {
		m = make(map[*Client]struct{}, 1)
		u.users[user] = m
	}
	m[c] = struct{}{}
}

func (u *userIndex) remove(user string, c *Client) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if m := u.users[user]; m != nil {
		delete(m, c)
		if len(m) == 0 {
			delete(u.users, user)
		}
	}
}

// clients returns a snapshot of user's clients.
func (u *userIndex) clients(user string) []*Client {
	u.mu.RLock()
	defer u.mu.RUnlock()
	out := make([]*Client, 0, len(u.users[user]))
	for c := range u.users[user] {
		out = append(out, c)
	}
	return out
}

func (u *userIndex) count(user string) int {
	u.mu.RLock()
	defer u.mu.RUnlock()
	return len(u.users[user])
}

func (u *userIndex) numUsers() int {
	u.mu.RLock()
	defer u.mu.RUnlock()
	return len(u.users)
}

// names returns a snapshot of the users with clients on this node.
func (u *userIndex) names() []string {
	u.mu.RLock()
	defer u.mu.RUnlock()
	out := make([]string, 0, len(u.users))
	for name := range u.users {
		out = append(out, name)
	}
	return out
}
