package hub

import (
	"context"
	"errors"
	"fmt"
	"github.com/heraldhq/herald/auth"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/protocol"
)

// handleHistory reads a channel's stream for a client: history must be on
// in the namespace; OnHistory decides, else the history permission.
func (c *Client) handleHistory(ctx context.Context, id uint32, req *protocol.HistoryRequest) error {
	r, s, err := c.channelCommand(req.Channel)
	if err != nil {
		return err
	}
	if !r.HasHistory() {
		return newError(protocol.ErrorNotAvailable)
	}
	var since *engine.StreamPosition
	if req.Since != nil {
		since = &engine.StreamPosition{Offset: req.Since.Offset, Epoch: req.Since.Epoch}
	}
	decided := false
	if fn := c.hub.cfg.Handlers.OnHistory; fn != nil {
		ev := HistoryEvent{Channel: req.Channel, Since: since, Limit: int(req.Limit), Reverse: req.Reverse}
		err := fn(ctx, c, ev)
		if decided = !errors.Is(err, ErrUseDefault); decided && err != nil {
			return err
		}
	}
	if !decided && !c.hasPermission(r.historyGrant(), s != nil) && !c.celAllows(r.cel.history, r, req.Channel, s != nil) &&
		!c.capsAllow(auth.OpHistory, req.Channel, s) {
		return newError(protocol.ErrorPermissionDenied)
	}
	if req.Limit != 0 {
		if err := c.hub.shedReply(); err != nil {
			return err // a position alone (limit 0) is small: still answered
		}
	}
	pubs, pos, err := c.hub.history(ctx, req.Channel, r, since, int(req.Limit), req.Reverse, c.hub.client.HistoryMaxPublicationLimit)
	if err != nil {
		return err
	}
	pubs = c.hub.rowFilter(ctx, req.Channel, c.User(), pubs)
	res := &protocol.HistoryResult{Epoch: pos.Epoch, Offset: pos.Offset, Publications: make([]*protocol.Publication, 0, len(pubs))}
	for _, p := range pubs {
		if !c.canDecodeFrom(req.Channel, pos.Epoch, p) {
			continue // as in delivery: see deliverLocked
		}
		res.Publications = append(res.Publications, protoPublication(p))
	}
	reserved, e := c.hub.admitReply(publicationsSize(res.Publications))
	if e != nil {
		return e // replyadmission.go: the reply would take the node past its budget
	}
	c.queueAdmittedReply(&protocol.Reply{Id: id, History: res}, reserved)
	return nil
}

// history reads ch's stream with the history command's rules: limit -1 or
// above maxLimit is capped at maxLimit (when positive), reverse from
// offset 0 is a bad request, and an epoch other than the stream's is an
// unrecoverable position.
func (h *Hub) history(ctx context.Context, ch string, r *rule, since *engine.StreamPosition, limit int, reverse bool, maxLimit int) ([]*engine.Publication, engine.StreamPosition, error) {
	if reverse && since != nil && since.Offset == 0 {
		return nil, engine.StreamPosition{}, newError(protocol.ErrorBadRequest)
	}
	if maxLimit > 0 && (limit < 0 || limit > maxLimit) {
		limit = maxLimit
	}
	pubs, pos, err := h.engine.History(ctx, ch, engine.HistoryRequest{
		Since: since, Limit: limit, Reverse: reverse, MetaTTL: r.HistoryMetaTTL,
	})
	if err != nil {
		return nil, pos, fmt.Errorf("history of %q: %w", ch, err)
	}
	if since != nil && since.Epoch != "" && since.Epoch != pos.Epoch {
		return nil, pos, newError(protocol.ErrorUnrecoverablePosition)
	}
	return pubs, pos, nil
}
