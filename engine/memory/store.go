package memory

import (
	"context"
	"sync"
	"time"

	"github.com/heraldhq/herald/engine"
)

var _ engine.Store = (*Engine)(nil)

// storeState is the engine's Store: buckets of entries in the process,
// for this node alone, as everything the memory engine keeps.
type storeState struct {
	mu      sync.Mutex
	buckets map[string]map[string]engine.StoreEntry
}

// StoreSet implements engine.Store.
func (e *Engine) StoreSet(ctx context.Context, bucket, key string, value []byte, expireAt time.Time) error {
	if err := e.life.Usable(ctx); err != nil {
		return err
	}
	s := &e.store
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.buckets == nil {
		s.buckets = map[string]map[string]engine.StoreEntry{}
	}
	b := s.buckets[bucket]
	if b == nil {
		b = map[string]engine.StoreEntry{}
		s.buckets[bucket] = b
	}
	b[key] = engine.StoreEntry{Value: append([]byte(nil), value...), ExpireAt: expireAt}
	return nil
}

// StoreGet implements engine.Store.
func (e *Engine) StoreGet(ctx context.Context, bucket string, keys []string) (map[string]engine.StoreEntry, error) {
	if err := e.life.Usable(ctx); err != nil {
		return nil, err
	}
	now := e.opts.Now()
	s := &e.store
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]engine.StoreEntry, len(keys))
	for _, k := range keys {
		if en, ok := s.buckets[bucket][k]; ok && en.Live(now) {
			out[k] = en
		}
	}
	return out, nil
}

// StoreDelete implements engine.Store.
func (e *Engine) StoreDelete(ctx context.Context, bucket string, keys []string) error {
	if err := e.life.Usable(ctx); err != nil {
		return err
	}
	s := &e.store
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		delete(s.buckets[bucket], k)
	}
	return nil
}

// StoreScan implements engine.Store. fn runs on a copy, so it may call
// the store.
func (e *Engine) StoreScan(ctx context.Context, bucket string, fn func(string, engine.StoreEntry) error) error {
	if err := e.life.Usable(ctx); err != nil {
		return err
	}
	now := e.opts.Now()
	s := &e.store
	s.mu.Lock()
	keys := make([]string, 0, len(s.buckets[bucket]))
	entries := make([]engine.StoreEntry, 0, len(s.buckets[bucket]))
	for k, en := range s.buckets[bucket] {
		if en.Live(now) {
			keys = append(keys, k)
			entries = append(entries, en)
		}
	}
	s.mu.Unlock()
	for i, k := range keys {
		if err := fn(k, entries[i]); err != nil {
			return err
		}
	}
	return nil
}

// sweep drops up to budget expired entries; the janitor calls it.
func (s *storeState) sweep(now time.Time, budget int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for name, b := range s.buckets {
		for k, en := range b {
			if n >= budget {
				return n
			}
			if !en.Live(now) {
				delete(b, k)
				n++
			}
		}
		if len(b) == 0 {
			delete(s.buckets, name)
		}
	}
	return n
}
