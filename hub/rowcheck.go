package hub

import (
	"context"
	"time"

	"github.com/heraldhq/herald/engine"
)

// RowChecker decides which users may see each publication of the
// namespaces it checks (sqlauth's row_check: table streams whose rows are
// visible to some users only). The hub asks it once per publication for
// the distinct users subscribed on this node before fan-out, and once per
// publication for the one user when a client recovers or reads history; a
// publication a user may not see is not sent to that user's connections
// (a positioned subscription moves past it, as past a publication its tags
// filter drops). An error denies.
type RowChecker interface {
	// Checks reports whether the channels of namespace ns are checked.
	Checks(ns string) bool
	// Visible returns which of users may see pub on channel ch; a user
	// missing from the map may not.
	Visible(ctx context.Context, ch string, pub *engine.Publication, users []string) (map[string]bool, error)
}

// rowCheckTimeout bounds one live check: the fan-out of the channel (and
// of the others its engine delivers from the same queue) waits for it.
const rowCheckTimeout = 5 * time.Second

// rowChecked reports whether ch's publications go through the row check.
func (h *Hub) rowChecked(ch string) bool {
	return h.cfg.RowCheck != nil && h.cfg.RowCheck.Checks(h.channels.syntax.Namespace(ch))
}

// rowVerdicts asks the row check about pub for the distinct users of ch's
// local subscribers; nil when ch is not checked.
func (h *Hub) rowVerdicts(ch string, pub *engine.Publication) map[string]bool {
	if !h.rowChecked(ch) {
		return nil
	}
	seen := map[string]bool{}
	var users []string
	h.subs.each(ch, func(c *Client, _ *subscription) {
		if u := c.User(); !seen[u] {
			seen[u] = true
			users = append(users, u)
		}
	})
	if len(users) == 0 {
		return map[string]bool{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), rowCheckTimeout)
	defer cancel()
	v, err := h.cfg.RowCheck.Visible(ctx, ch, pub, users)
	if err != nil {
		h.log.Warn("row check failed: the publication is sent to nobody", "channel", ch, "offset", pub.Offset, "error", err)
		return map[string]bool{}
	}
	return v
}

// rowFilter keeps the publications user may see, for recovery and
// history; pubs unchanged when ch is not checked.
func (h *Hub) rowFilter(ctx context.Context, ch, user string, pubs []*engine.Publication) []*engine.Publication {
	if !h.rowChecked(ch) || len(pubs) == 0 {
		return pubs
	}
	out := make([]*engine.Publication, 0, len(pubs))
	for _, p := range pubs {
		v, err := h.cfg.RowCheck.Visible(ctx, ch, p, []string{user})
		if err != nil {
			h.log.Warn("row check failed: the publication is left out", "channel", ch, "offset", p.Offset, "user", user, "error", err)
			continue
		}
		if v[user] {
			out = append(out, p)
		}
	}
	return out
}
