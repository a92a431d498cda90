package api

import (
	"context"
	"errors"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// history reads the channel's stream. A missing limit (0) returns the
// position only, -1 every publication; since is exclusive.
func (a *handler) history(ctx context.Context, req *historyRequest) (*historyResult, *Error) {
	if req.Limit < -1 {
		return nil, badRequest("limit: want -1 (all), 0 (position only) or a positive number, got %d", req.Limit)
	}
	var since *engine.StreamPosition
	if s := req.Since; s != nil {
		if req.Reverse && s.Offset == 0 {
			return nil, badRequest("since.offset: must be positive with reverse (since is exclusive)")
		}
		since = &engine.StreamPosition{Offset: s.Offset, Epoch: s.Epoch}
	}
	pubs, pos, err := a.hub.History(ctx, req.Channel, since, int(req.Limit), req.Reverse)
	if err != nil {
		var he *hub.Error
		if errors.As(err, &he) && he.Code == uint32(protocol.ErrorUnrecoverablePosition) {
			return nil, newError(protocol.ErrorUnrecoverablePosition, "unrecoverable position: since.epoch %q is not the stream's epoch %q", since.Epoch, pos.Epoch)
		}
		return nil, a.fromHub(ctx, "history", req.Channel, "history", err)
	}
	res := &historyResult{Publications: make([]publication, len(pubs)), Epoch: pos.Epoch, Offset: pos.Offset}
	for i, p := range pubs {
		res.Publications[i] = publication{Data: p.Data, Offset: p.Offset, Tags: p.Tags}
		if p.Info != nil {
			ci := toClientInfo(p.Info)
			res.Publications[i].Info = &ci
		}
	}
	return res, nil
}

// historyRemove drops the channel's publications; its offset and epoch
// stay, so clients' positions remain comparable.
func (a *handler) historyRemove(ctx context.Context, req *channelRequest) (*emptyResult, *Error) {
	if err := a.hub.RemoveHistory(ctx, req.Channel); err != nil {
		return nil, a.fromHub(ctx, "history_remove", req.Channel, "history", err)
	}
	return &emptyResult{}, nil
}
