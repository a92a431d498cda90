package api

import (
	"context"
	"errors"
	"fmt"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/protocol"
)

// historyPage is how many publications history reads from the engine at
// a time, so that a read past Config.MaxResponseSize stops within a page
// of the limit instead of loading the whole stream first.
const historyPage = 256

// history reads the channel's stream. A missing limit (0) returns the
// position only, -1 every publication; since is exclusive. A result past
// Config.MaxResponseSize is error 106 naming how many publications fit.
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
	pubs, pos, e := a.readHistory(ctx, req, since)
	if e != nil {
		return nil, e
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

// readHistory reads the publications req asks for a page at a time, each
// page from the last one's end, and stops with error 106 once their
// estimated size passes Config.MaxResponseSize. The position is the
// last page's.
func (a *handler) readHistory(ctx context.Context, req *historyRequest, since *engine.StreamPosition) ([]*engine.Publication, engine.StreamPosition, *Error) {
	limit := int(req.Limit)
	var out []*engine.Publication
	var size int64
	from := since
	for {
		n := 0
		if limit != 0 {
			n = historyPage
			if limit > 0 {
				n = min(n, limit-len(out))
			}
		}
		pubs, pos, err := a.hub.History(ctx, req.Channel, from, n, req.Reverse)
		if err != nil {
			var he *hub.Error
			if errors.As(err, &he) && he.Code == protocol.ErrorUnrecoverablePosition {
				if from != since {
					return nil, pos, newError(protocol.ErrorUnrecoverablePosition, "unrecoverable position: the stream's epoch changed to %q during the read: read again", pos.Epoch)
				}
				return nil, pos, newError(protocol.ErrorUnrecoverablePosition, "unrecoverable position: since.epoch %q is not the stream's epoch %q", since.Epoch, pos.Epoch)
			}
			return nil, pos, a.fromHub(ctx, "history", req.Channel, "history", err)
		}
		for _, p := range pubs {
			if size += publicationSize(p); size > a.cfg.MaxResponseSize {
				if len(out) == 0 {
					return nil, pos, a.responseTooLarge("history", " with its first publication alone")
				}
				return nil, pos, a.responseTooLarge("history", fmt.Sprintf(" after %d publications: ask with a limit of at most %d and page with since (the offset of the last publication read)", len(out), len(out)))
			}
			out = append(out, p)
		}
		if len(pubs) < n || n == 0 || (limit > 0 && len(out) >= limit) {
			return out, pos, nil
		}
		from = &engine.StreamPosition{Offset: pubs[len(pubs)-1].Offset, Epoch: pos.Epoch}
	}
}

// historyRemove drops the channel's publications; its offset and epoch
// stay, so clients' positions remain comparable.
func (a *handler) historyRemove(ctx context.Context, req *channelRequest) (*emptyResult, *Error) {
	if err := a.hub.RemoveHistory(ctx, req.Channel); err != nil {
		return nil, a.fromHub(ctx, "history_remove", req.Channel, "history", err)
	}
	return &emptyResult{}, nil
}
