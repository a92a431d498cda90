package hub

import (
	"errors"
	"fmt"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/protocol"
)

// Bounds on the keys of map channels: MapOptions.MaxKeys per channel,
// enforced by the engine atomically with the change (a new key beyond it
// changes nothing), and MapOptions.MaxKeysPerClient per connection,
// counted here. Both answer error 106 (limit exceeded), the code
// Centrifugo gives its own limits.

// Defaults of MapOptions.MaxKeys and MaxKeysPerClient: far above what a
// map a client follows as a snapshot can sensibly hold, and low enough that
// one connection cannot fill a node (1,000 keys of the largest message
// each) nor a handful of them a channel.
const (
	DefaultMapMaxKeys          = 100_000
	DefaultMapMaxKeysPerClient = 1_000
)

// maxKeys is the engine's bound on the channel's keys, 0 for none.
func (o MapOptions) maxKeys() int { return keyBound(o.MaxKeys, DefaultMapMaxKeys) }

// maxKeysPerClient is the bound on one connection's keys in a channel, 0
// for none.
func (o MapOptions) maxKeysPerClient() int {
	return keyBound(o.MaxKeysPerClient, DefaultMapMaxKeysPerClient)
}

// keyBound reads a key bound option: -1 is no bound (0), 0 the default.
func keyBound(v, def int) int {
	switch {
	case v < 0:
		return 0
	case v == 0:
		return def
	}
	return v
}

// checkMapKeyBounds adds the problems of the key bounds of m to ps.
func checkMapKeyBounds(m MapOptions, mf string, ps *optionProblems) {
	if m.MaxKeys < -1 {
		ps.add(mf, "MaxKeys", fmt.Sprintf("%d: want -1 (no bound), 0 (the default, %d) or a positive number", m.MaxKeys, DefaultMapMaxKeys))
	}
	if m.MaxKeysPerClient < -1 {
		ps.add(mf, "MaxKeysPerClient", fmt.Sprintf("%d: want -1 (no bound), 0 (the default, %d) or a positive number", m.MaxKeysPerClient, DefaultMapMaxKeysPerClient))
	}
}

// mapKeyLimitError is the client error for the engine's refusal of a new
// key, nil for any other error.
func mapKeyLimitError(ch string, err error, limit int) *Error {
	if !errors.Is(err, engine.ErrMapKeyLimit) {
		return nil
	}
	return &Error{Code: protocol.ErrorLimitExceeded, Message: fmt.Sprintf("map channel %q holds %d keys (map.max_keys)", ch, limit)}
}

// takeMapKey counts key as the client's in ch, or returns error 106 when
// that would put it over limit (0: no bound). added reports whether the
// key is new for the client, to give back with releaseMapKey if the
// publication fails.
func (c *Client) takeMapKey(ch, key string, limit int) (added bool, e *Error) {
	if limit == 0 {
		return false, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var keys map[string]struct{}
	if c.rare != nil {
		keys = c.rare.mapKeys[ch]
	}
	if _, ok := keys[key]; ok {
		return false, nil
	}
	if len(keys) >= limit {
		return false, &Error{Code: protocol.ErrorLimitExceeded, Message: fmt.Sprintf("this connection set %d keys of %q (map.max_keys_per_client)", limit, ch)}
	}
	if keys == nil {
		r := c.rareLocked()
		if r.mapKeys == nil {
			r.mapKeys = make(map[string]map[string]struct{})
		}
		keys = make(map[string]struct{})
		r.mapKeys[ch] = keys
	}
	keys[key] = struct{}{}
	return true, nil
}

// releaseMapKey stops counting key as the client's in ch.
func (c *Client) releaseMapKey(ch, key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rare == nil {
		return
	}
	keys := c.rare.mapKeys[ch]
	delete(keys, key)
	if len(keys) == 0 {
		delete(c.rare.mapKeys, ch)
	}
}
