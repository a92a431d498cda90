package hub

import (
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/hub/internal/access"
	"github.com/heraldhq/herald/hub/internal/ratelimit"
)

// rareState is per-connection state that most connections never have,
// behind one pointer of Client, so that an idle connection pays 8 bytes
// for all of it (TestIdleClientMemory) and only the connections that have
// some pay for the rest. Guarded by the client's mutex.
type rareState struct {
	// token is the connection token's jti and iat, which token
	// revocation checks (access.go); zero when the token had neither.
	token access.Token
	// mapKeys are the keys the connection set in each map channel and has
	// not removed since, which map.max_keys_per_client counts
	// (mapkeys_limit.go).
	mapKeys map[string]map[string]struct{}
	// rates and errorRates are the connection's buckets of
	// client.rate_limit (ratelimit.go), made on first use.
	rates, errorRates *ratelimit.Set
	// caps is the connection's channel capabilities (capabilities.go).
	caps *auth.Caps
	// connectHeaders are the connect command's emulated headers that
	// Config.KeepConnectHeaders names (connect_headers.go).
	connectHeaders map[string]string
	// mapCatchUps are when the client began each map subscribe flow not
	// yet live, in Unix nanoseconds, for map.subscribe_catch_up_timeout
	// (mapcatchup.go).
	mapCatchUps map[string]int64
}

// rareLocked returns the client's rareState, made on first use; c.mu must
// be held.
func (c *Client) rareLocked() *rareState {
	if c.rare == nil {
		c.rare = &rareState{}
	}
	return c.rare
}

// setTokenLocked records the connection token's jti and iat (none when
// it has neither, so such a client makes no rareState); c.mu must be held.
func (c *Client) setTokenLocked(t access.Token) {
	if t.ID == "" && t.IssuedAt == 0 {
		if c.rare != nil {
			c.rare.token = access.Token{}
		}
		return
	}
	c.rareLocked().token = t
}
