package redis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/internal/wire"
)

// History reads ch's stream. Reading a channel that has no stream creates
// its position with a new epoch, so the position a subscriber gets before
// the first publication has the epoch that publication will get. Every
// read keeps the position for req.MetaTTL (or the default) from now.
func (e *Engine) History(ctx context.Context, ch string, req engine.HistoryRequest) ([]*engine.Publication, engine.StreamPosition, error) {
	if err := e.life.Usable(ctx); err != nil {
		return nil, engine.StreamPosition{}, fmt.Errorf("history %q: %w", ch, err)
	}
	if req.Limit < -1 {
		return nil, engine.StreamPosition{}, fmt.Errorf("history %q: limit %d below -1", ch, req.Limit)
	}
	// Entry ids are "<offset>-0"; Since is exclusive, ids are inclusive.
	low, high, count := "-", "+", req.Limit
	if s := req.Since; s != nil {
		switch {
		case req.Reverse && s.Offset <= 1:
			count = 0 // nothing below offset 1
		case req.Reverse:
			high = streamID(s.Offset - 1)
		case s.Offset == math.MaxUint64:
			count = 0
		default:
			low = streamID(s.Offset + 1)
		}
	}
	reverse := "0"
	if req.Reverse {
		reverse = "1"
	}
	v, err := historyScript.Run(ctx, e.client, e.keys.historyKeys(ch),
		newEpoch(), millis(e.metaTTL(req.MetaTTL)), low, high, count, reverse).Result()
	if err != nil {
		return nil, engine.StreamPosition{}, fmt.Errorf("history %q: %w", ch, err)
	}
	r, err := parseRange(v)
	if err != nil {
		return nil, engine.StreamPosition{}, fmt.Errorf("history %q: %w", ch, err)
	}
	return r.pubs, engine.StreamPosition{Offset: r.top, Epoch: r.epoch}, nil
}

// RemoveHistory drops ch's publications; its top offset and epoch stay, so
// later publications continue the same stream.
func (e *Engine) RemoveHistory(ctx context.Context, ch string) error {
	if err := e.life.Usable(ctx); err != nil {
		return fmt.Errorf("remove history %q: %w", ch, err)
	}
	if err := e.client.Del(ctx, e.keys.stream(ch)).Err(); err != nil {
		return fmt.Errorf("remove history %q: %w", ch, err)
	}
	return nil
}

// position reads ch's stream position without creating one: a channel
// without a stream is at offset 0 with no epoch.
func (e *Engine) position(ctx context.Context, ch string) (engine.StreamPosition, error) {
	vals, err := e.client.HMGet(ctx, e.keys.meta(ch), "s", "e").Result()
	if err != nil {
		return engine.StreamPosition{}, err
	}
	var sp engine.StreamPosition
	if s, ok := vals[0].(string); ok {
		if sp.Offset, err = strconv.ParseUint(s, 10, 64); err != nil {
			return engine.StreamPosition{}, fmt.Errorf("stream top %q: %w", s, err)
		}
	}
	sp.Epoch, _ = vals[1].(string)
	return sp, nil
}

func (e *Engine) metaTTL(requested time.Duration) time.Duration {
	if requested > 0 {
		return requested
	}
	return e.opts.HistoryMetaTTL
}

// rangeReply is a decoded reply of the history and range scripts.
type rangeReply struct {
	top   uint64
	epoch string
	pubs  []*engine.Publication
}

// rangeArgs are the range script's arguments for the publications after
// offset after, up to upto (0: to the top).
func (e *Engine) rangeArgs(after, upto uint64) []any {
	high := "+"
	if upto > 0 {
		high = streamID(upto)
	}
	return []any{streamID(after + 1), high, e.opts.ReplayBatch}
}

// readRange reads ch's publications after offset after up to upto (0: to
// the top), at most ReplayBatch of them, with the stream's position.
func (e *Engine) readRange(ctx context.Context, c goredis.Scripter, ch string, after, upto uint64) (rangeReply, error) {
	v, err := rangeScript.Run(ctx, c, e.keys.historyKeys(ch), e.rangeArgs(after, upto)...).Result()
	if err != nil {
		return rangeReply{}, fmt.Errorf("read %q after %d: %w", ch, after, err)
	}
	r, err := parseRange(v)
	if err != nil {
		return rangeReply{}, fmt.Errorf("read %q after %d: %w", ch, after, err)
	}
	return r, nil
}

// rangeCmd queues readRange's script in a pipeline. It sends the script's
// source: a pipeline cannot fall back from EVALSHA when Redis does not
// know the script yet.
func (e *Engine) rangeCmd(ctx context.Context, p goredis.Pipeliner, ch string, after, upto uint64) {
	rangeScript.Eval(ctx, p, e.keys.historyKeys(ch), e.rangeArgs(after, upto)...)
}

var errReply = errors.New("unexpected script reply")

// parseRange decodes {top, epoch, entries}; entries are stream entries
// {id, {"d", body}}.
func parseRange(v any) (rangeReply, error) {
	arr, ok := v.([]any)
	if !ok || len(arr) != 3 {
		return rangeReply{}, errReply
	}
	var r rangeReply
	var err error
	switch top := arr[0].(type) {
	case string:
		r.top, err = strconv.ParseUint(top, 10, 64)
	case int64:
		r.top = uint64(top)
	default:
		err = errReply
	}
	if err != nil {
		return rangeReply{}, fmt.Errorf("stream top: %w", err)
	}
	if r.epoch, ok = arr[1].(string); !ok {
		return rangeReply{}, errReply
	}
	entries, ok := arr[2].([]any)
	if !ok {
		return rangeReply{}, errReply
	}
	if len(entries) > 0 {
		r.pubs = make([]*engine.Publication, 0, len(entries))
	}
	for _, raw := range entries {
		p, err := parseEntry(raw)
		if err != nil {
			return rangeReply{}, err
		}
		r.pubs = append(r.pubs, p)
	}
	return r, nil
}

func parseEntry(raw any) (*engine.Publication, error) {
	entry, ok := raw.([]any)
	if !ok || len(entry) != 2 {
		return nil, errReply
	}
	id, _ := entry[0].(string)
	offset, err := parseStreamID(id)
	if err != nil {
		return nil, err
	}
	fields, _ := entry[1].([]any)
	for i := 0; i+1 < len(fields); i += 2 {
		if name, _ := fields[i].(string); name != "d" {
			continue
		}
		body, _ := fields[i+1].(string)
		p, err := wire.DecodePublication([]byte(body))
		if err != nil {
			return nil, fmt.Errorf("entry %s: %w", id, err)
		}
		p.Offset = offset
		return p, nil
	}
	return nil, fmt.Errorf("entry %s: no body", id)
}

// streamID is the stream entry id of an offset.
func streamID(offset uint64) string { return strconv.FormatUint(offset, 10) + "-0" }

func parseStreamID(id string) (uint64, error) {
	ms, seq, ok := strings.Cut(id, "-")
	if !ok || seq != "0" {
		return 0, fmt.Errorf("stream entry id %q", id)
	}
	off, err := strconv.ParseUint(ms, 10, 64)
	if err != nil || off == 0 {
		return 0, fmt.Errorf("stream entry id %q", id)
	}
	return off, nil
}
