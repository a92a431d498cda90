package engine

import (
	"context"
	"time"
)

// Store is a small key-value state kept by an engine for the whole
// cluster: the records of token revocation, user blocking and user
// status. It is not for traffic: nodes read a bucket whole at start and
// now and then (StoreScan), and hold it in memory, so that a connect
// costs no round-trip to the engine; writes are rare (an API call).
//
// Entries live in buckets; a zero expireAt keeps an entry until it is
// deleted. An expired entry is never returned, and the engine removes it
// on its own in time. Keys and buckets are opaque strings of at most a few
// hundred bytes; values are at most a few kilobytes.
//
// The memory engine keeps a Store in the process (one node), the
// PostgreSQL and Redis engines durably. An engine that cannot keep state
// between nodes (NATS) does not implement it; see StoreOf.
type Store interface {
	// StoreSet writes value under key, replacing what was there.
	StoreSet(ctx context.Context, bucket, key string, value []byte, expireAt time.Time) error
	// StoreGet returns the live entries of keys that exist; missing and
	// expired keys are absent from the map.
	StoreGet(ctx context.Context, bucket string, keys []string) (map[string]StoreEntry, error)
	// StoreDelete removes keys; a missing key is not an error.
	StoreDelete(ctx context.Context, bucket string, keys []string) error
	// StoreScan calls fn with every live entry of bucket, in no order. An
	// error from fn stops the scan and is returned.
	StoreScan(ctx context.Context, bucket string, fn func(key string, e StoreEntry) error) error
}

// StoreEntry is a stored value with its expiry (zero: none).
type StoreEntry struct {
	Value    []byte
	ExpireAt time.Time
}

// Live reports whether the entry has not expired at now.
func (e StoreEntry) Live(now time.Time) bool { return e.ExpireAt.IsZero() || now.Before(e.ExpireAt) }
