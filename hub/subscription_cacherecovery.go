package hub

import (
	"context"
	"fmt"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/protocol"
)

// RecoveryMode is how a namespace's recoverable subscriptions recover
// (NamespaceOptions.ForceRecoveryMode).
type RecoveryMode string

// Recovery modes, as Centrifugo's force_recovery_mode.
const (
	// RecoveryStream replays the publications the client missed (the
	// default; the empty mode means it too).
	RecoveryStream RecoveryMode = "stream"
	// RecoveryCache gives the client only the channel's latest
	// publication, on every (re)subscribe that recovers.
	RecoveryCache RecoveryMode = "cache"
)

// cacheRecovery reports whether the namespace recovers in cache mode.
func (r *rule) cacheRecovery() bool { return r.ForceRecoveryMode == RecoveryCache }

// checkRecoveryMode adds the problems of the recovery mode options to ps,
// with the reference's rule that auto_cache_recover needs force_recovery
// and the cache mode.
func checkRecoveryMode(o NamespaceOptions, field string, ps *optionProblems) {
	switch o.ForceRecoveryMode {
	case "", RecoveryStream, RecoveryCache:
	default:
		ps.add(field, "ForceRecoveryMode", fmt.Sprintf("%q: want %s or %s", o.ForceRecoveryMode, RecoveryStream, RecoveryCache))
		return
	}
	if o.AutoCacheRecover && (!o.ForceRecovery || o.ForceRecoveryMode != RecoveryCache) {
		ps.add(field, "AutoCacheRecover", "AutoCacheRecover needs ForceRecovery and ForceRecoveryMode cache")
	}
}

// recoverCache is recovery in cache mode: the latest publication of the
// channel (the latest that passes the subscriber's tags filter, looked
// for among the last RecoveryMaxPublicationLimit ones), unless the client
// already holds the top of the stream. As the reference, it is recovered
// when the stream's newest publication is still kept (it is the top), or
// when the client is at the top of an empty history.
func (c *Client) recoverCache(ctx context.Context, s *subscription, req *protocol.SubscribeRequest) ([]*engine.Publication, engine.StreamPosition, bool, error) {
	limit := 1
	if s.filter != nil || c.hub.rowChecked(s.channel) {
		limit = c.hub.client.RecoveryMaxPublicationLimit
	}
	pubs, pos, err := c.hub.engine.History(ctx, s.channel, engine.HistoryRequest{Limit: limit, Reverse: true, MetaTTL: s.rule.HistoryMetaTTL})
	if err != nil {
		return nil, pos, false, err
	}
	sameState := req.Offset > 0 && req.Offset == pos.Offset && req.Epoch == pos.Epoch
	if len(pubs) == 0 {
		return nil, pos, sameState, nil
	}
	if pubs[0].Offset != pos.Offset {
		return nil, pos, false, nil
	}
	if sameState {
		return nil, pos, true, nil
	}
	for _, p := range c.hub.rowFilter(ctx, s.channel, c.User(), pubs) { // newest first
		if s.filter == nil || s.filter.Match(p.Tags) {
			return []*engine.Publication{p}, pos, true, nil
		}
	}
	return nil, pos, true, nil
}
