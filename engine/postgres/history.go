package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/engine"
)

// History reads ch's stream. One round trip carries two statements: touch()
// creates or extends the stream's position (so the epoch a subscriber sees
// before the first publication is the one that publication gets), and the
// read that follows takes the position and the publications from one
// snapshot, later than touch's, so the returned publications and top offset
// always agree.
func (e *Engine) History(ctx context.Context, ch string, req engine.HistoryRequest) ([]*engine.Publication, engine.StreamPosition, error) {
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return nil, engine.StreamPosition{}, fmt.Errorf("history %q: %w", ch, err)
	}
	if req.Limit < -1 {
		return nil, engine.StreamPosition{}, fmt.Errorf("history %q: limit %d below -1", ch, req.Limit)
	}
	var limit *int64
	if req.Limit >= 0 {
		l := int64(req.Limit)
		limit = &l
	}
	var b pgx.Batch
	b.Queue(e.sql.touch, ch, ceilMS(orDefault(req.MetaTTL, e.opts.HistoryMetaTTL)))
	if req.Reverse {
		upto := int64(math.MaxInt64)
		if req.Since != nil {
			upto = clampOffset(req.Since.Offset) - 1
		}
		b.Queue(e.sql.readReverse, ch, upto, limit)
	} else {
		var after int64
		if req.Since != nil {
			after = clampOffset(req.Since.Offset)
		}
		b.Queue(e.sql.readForward, ch, after, limit)
	}
	br := e.qPool.SendBatch(ctx, &b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, engine.StreamPosition{}, fmt.Errorf("history %q: touch stream: %w", ch, err)
	}
	rows, err := br.Query()
	if err != nil {
		return nil, engine.StreamPosition{}, fmt.Errorf("history %q: %w", ch, err)
	}
	defer rows.Close()
	var (
		pubs []*engine.Publication
		sp   engine.StreamPosition
	)
	for rows.Next() {
		var top int64
		var off *int64
		var r historyRow
		if err := rows.Scan(&top, &sp.Epoch, &off, &r.timeMS, &r.data, &r.clientID, &r.userID, &r.connInfo, &r.chanInfo, &r.tags, &r.key, &r.removed); err != nil {
			return nil, engine.StreamPosition{}, fmt.Errorf("history %q: read row: %w", ch, err)
		}
		sp.Offset = uint64(top)
		if off == nil {
			continue // the position alone: no publication matched
		}
		r.offset = *off
		p, err := r.publication()
		if err != nil {
			return nil, engine.StreamPosition{}, fmt.Errorf("history %q: %w", ch, err)
		}
		pubs = append(pubs, p)
	}
	if err := rows.Err(); err != nil {
		return nil, engine.StreamPosition{}, fmt.Errorf("history %q: %w", ch, err)
	}
	if sp.Epoch == "" {
		return nil, engine.StreamPosition{}, fmt.Errorf("history %q: stream vanished while it was read", ch)
	}
	return pubs, sp, nil
}

// RemoveHistory drops ch's publications; its top offset and epoch stay.
func (e *Engine) RemoveHistory(ctx context.Context, ch string) error {
	if err := e.life.Deliverable(ctx, ErrNotStarted); err != nil {
		return fmt.Errorf("remove history %q: %w", ch, err)
	}
	if _, err := e.qPool.Exec(ctx, e.sql.removeHistory, ch); err != nil {
		return fmt.Errorf("remove history %q: %w", ch, err)
	}
	return nil
}

func clampOffset(o uint64) int64 {
	if o > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(o)
}

// historyRow is a row of the history table, in historyColumns order.
type historyRow struct {
	offset   int64
	timeMS   *int64
	data     []byte
	clientID *string
	userID   *string
	connInfo []byte
	chanInfo []byte
	tags     *string
	key      *string // map changes
	removed  *bool
}

func (r *historyRow) publication() (*engine.Publication, error) {
	p := &engine.Publication{Offset: uint64(r.offset), Data: r.data}
	if r.key != nil {
		p.Key = *r.key
		p.Removed = r.removed != nil && *r.removed
		if p.Removed {
			p.Data = nil
		}
	}
	if r.timeMS != nil {
		p.Time = *r.timeMS
	}
	if r.clientID != nil {
		info := &engine.ClientInfo{Client: *r.clientID, ConnInfo: r.connInfo, ChanInfo: r.chanInfo}
		if r.userID != nil {
			info.User = *r.userID
		}
		p.Info = info
	}
	if r.tags != nil {
		if err := json.Unmarshal([]byte(*r.tags), &p.Tags); err != nil {
			return nil, fmt.Errorf("publication %d: tags: %w", r.offset, err)
		}
	}
	return p, nil
}

func (r *historyRow) fields() []any {
	return []any{&r.offset, &r.timeMS, &r.data, &r.clientID, &r.userID, &r.connInfo, &r.chanInfo, &r.tags, &r.key, &r.removed}
}

// scanHistoryRow reads a row of historyColumns.
func scanHistoryRow(row pgx.CollectableRow) (*engine.Publication, error) {
	var r historyRow
	if err := row.Scan(r.fields()...); err != nil {
		return nil, fmt.Errorf("read history row: %w", err)
	}
	return r.publication()
}

// scanHistoryRowWith reads a row of one leading column into lead, then
// historyColumns.
func scanHistoryRowWith(rows pgx.Rows, lead any) (*engine.Publication, error) {
	var r historyRow
	if err := rows.Scan(append([]any{lead}, r.fields()...)...); err != nil {
		return nil, fmt.Errorf("read history row: %w", err)
	}
	return r.publication()
}
