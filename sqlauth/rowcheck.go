package sqlauth

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/hub"
)

// The row check (Checks.Row) makes the Authorizer a hub.RowChecker: the
// namespace's query is called with the user ($1), the channel ($2) and the
// publication's data as text ($3, e.g. "select app.can_see($1, $2,
// $3::jsonb)") and answers whether that user may see it. The hub asks
// once per publication per distinct user of a node; answers about
// publications with an offset are cached for CacheTTL like the other
// checks (and dropped by the same invalidations), keyed by the offset and
// time so that a reset stream's new publications are not taken for old.
var _ hub.RowChecker = (*Authorizer)(nil)

// HasRowChecks reports whether some namespace has a row check, so that
// the Authorizer is to be the hub's Config.RowCheck.
func (a *Authorizer) HasRowChecks() bool { return a.any(func(c Checks) string { return c.Row }) }

// Checks reports whether namespace ns has a row check.
func (a *Authorizer) Checks(ns string) bool { return a.cfg.Namespaces[ns].Row != "" }

// Visible runs the row check of ch's namespace for each user. A failing
// query fails the whole answer, which the hub takes as a denial.
func (a *Authorizer) Visible(ctx context.Context, ch string, pub *engine.Publication, users []string) (map[string]bool, error) {
	q := a.cfg.Namespaces[a.cfg.ChannelSyntax.Namespace(ch)].Row
	if q == "" {
		return nil, fmt.Errorf("sqlauth: the namespace of channel %q has no row check", ch)
	}
	out := make(map[string]bool, len(users))
	for _, u := range users {
		ok, err := a.rowVisible(ctx, q, u, ch, pub)
		if err != nil {
			return nil, err
		}
		out[u] = ok
	}
	return out, nil
}

func (a *Authorizer) rowVisible(ctx context.Context, query, user, ch string, pub *engine.Publication) (bool, error) {
	cacheable := pub.Offset > 0 && a.cfg.CacheTTL > 0
	key := cacheKey{action: "row:" + strconv.FormatUint(pub.Offset, 10) + ":" + strconv.FormatInt(pub.Time, 10), user: user, channel: ch}
	if cacheable {
		if allowed, ok := a.cache.get(key); ok {
			return allowed, nil
		}
	}
	gen := a.cache.generation()
	ctx, cancel := context.WithTimeout(ctx, a.cfg.Timeout)
	defer cancel()
	var allowed bool
	if err := a.pool.QueryRow(ctx, query, user, ch, string(pub.Data)).Scan(&allowed); err != nil {
		return false, fmt.Errorf("sqlauth: row check for user %q on %s at offset %d: %w", user, ch, pub.Offset, err)
	}
	if cacheable {
		a.cache.put(key, allowed, time.Now().Add(a.cfg.CacheTTL), gen)
	}
	return allowed, nil
}
