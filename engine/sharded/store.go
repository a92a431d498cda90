package sharded

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldhq/herald/engine"
)

// The Store of a sharded engine is its first shard's. Its entries (token
// revocations, blocked users, user status) are few and read whole by every
// node, so spreading them would only make each load ask every shard; and
// keeping them in one place means a change of the shard list never loses
// a revocation or a block (a key spread by hash would move to a shard
// that does not hold it). Only the first shard must therefore stay.

var _ engine.Store = (*Engine)(nil)

func (e *Engine) store() (engine.Store, error) {
	st, ok := engine.StoreOf(e.shards[0])
	if !ok {
		return nil, fmt.Errorf("sharded engine: shard 0 (%T) keeps no store", e.shards[0])
	}
	return st, nil
}

// StoreSet implements engine.Store on the first shard.
func (e *Engine) StoreSet(ctx context.Context, bucket, key string, value []byte, expireAt time.Time) error {
	st, err := e.store()
	if err != nil {
		return err
	}
	return wrap(st.StoreSet(ctx, bucket, key, value, expireAt), 0)
}

// StoreGet implements engine.Store on the first shard.
func (e *Engine) StoreGet(ctx context.Context, bucket string, keys []string) (map[string]engine.StoreEntry, error) {
	st, err := e.store()
	if err != nil {
		return nil, err
	}
	m, err := st.StoreGet(ctx, bucket, keys)
	return m, wrap(err, 0)
}

// StoreDelete implements engine.Store on the first shard.
func (e *Engine) StoreDelete(ctx context.Context, bucket string, keys []string) error {
	st, err := e.store()
	if err != nil {
		return err
	}
	return wrap(st.StoreDelete(ctx, bucket, keys), 0)
}

// StoreScan implements engine.Store on the first shard.
func (e *Engine) StoreScan(ctx context.Context, bucket string, fn func(string, engine.StoreEntry) error) error {
	st, err := e.store()
	if err != nil {
		return err
	}
	return wrap(st.StoreScan(ctx, bucket, fn), 0)
}
