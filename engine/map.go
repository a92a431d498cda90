package engine

import (
	"context"
	"errors"
	"time"
)

// MapBroker is implemented by engines that keep the state of map channels:
// a set of keys, each with its latest publication, next to the channel's
// stream, which records every change to the state (Publication.Key set,
// Publication.Removed for a removal). A subscriber reads the state page by
// page with MapState, then the stream from the position the first page
// returned: applying the stream's changes over the pages, key by key, gives
// the state as of the end of the stream, with no change missed.
//
// Engines that cannot keep map state do not implement it; the hub refuses
// to start with map namespaces on them.
type MapBroker interface {
	// MapPublish sets pub.Key to pub (or removes the key when pub.Removed),
	// appends the change to the channel's stream and delivers it live like
	// Publish, atomically: a MapState read sees the change if and only if
	// its position is at or past the change's offset. Removing a key that
	// is not there still appends and delivers the removal, unless
	// opts.SkipMissingRemove is set. A change refused by its conditions
	// returns an error and changes nothing; with ErrMapDuplicate the
	// position returned is the first change's, with ErrMapPositionMismatch
	// and a removal's ErrMapKeyNotFound (SkipMissingRemove) the stream's
	// current one (as Centrifugo answers them), zero with the others.
	MapPublish(ctx context.Context, channel string, pub *Publication, opts MapPublishOptions) (StreamPosition, error)
	// MapState reads a page of the channel's state, in key order, and the
	// stream's position at the time of the read.
	MapState(ctx context.Context, channel string, req MapStateRequest) (MapStatePage, error)
	// MapStats counts the channel's keys.
	MapStats(ctx context.Context, channel string) (MapStats, error)
	// MapClear drops the channel's state and stream; the stream starts
	// again with a new epoch, so subscribers notice and read the state
	// again.
	MapClear(ctx context.Context, channel string) error
}

// MapPublishOptions says how a map change is kept.
type MapPublishOptions struct {
	// StreamSize and StreamTTL keep the change stream (both positive):
	// subscribers join the live flow through it, so it is required.
	StreamSize int
	StreamTTL  time.Duration
	// MetaTTL is how long the stream's position and the state outlive
	// the last change (0: the engine's default for history meta).
	MetaTTL time.Duration
	// KeyTTL, when positive, removes the key that long after this change
	// unless it is published again meanwhile; the removal is a change
	// like any other (in the stream, delivered live, Info nil).
	KeyTTL time.Duration
	// SkipMissingRemove makes the removal of a key that is not in the
	// state change nothing and fail with ErrMapKeyNotFound and the
	// stream's current position, as Centrifugo answers it (suppressed,
	// key_not_found, with the stream's offset and epoch: centrifuge
	// v0.40.1 map_broker_memory.go remove, map_broker_add.lua). The
	// position of a channel without a stream may be zero or offset 0
	// with an epoch. With ExpectedPosition set the removal fails with
	// ErrMapPositionMismatch instead, as there.
	SkipMissingRemove bool
	// TouchIfExists makes the publication of a key that is in the state
	// only restart its KeyTTL: its value stays, nothing is appended or
	// delivered, and the current position is returned. Presence kept as a
	// map refreshes its keys this way.
	TouchIfExists bool
	// MaxKeys, when positive, bounds the channel's keys: the publication
	// of a key that is not in the state, when the state already holds
	// MaxKeys keys, changes nothing and fails with ErrMapKeyLimit. Keys
	// past their KeyTTL that the engine has not removed yet count.
	// Changes of keys in the state and removals are never refused.
	MaxKeys int
	// KeyMode makes the publication of a key conditional (Centrifugo's
	// key_mode): MapKeyIfNew only when the key is not in the state,
	// MapKeyIfExists only when it is. Otherwise nothing changes and
	// MapPublish fails with ErrMapKeyExists or ErrMapKeyNotFound. Removals
	// ignore it.
	KeyMode MapKeyMode
	// Version, when positive, orders the changes of a key (Centrifugo's
	// version): the publication goes through only when the key is not in
	// the state, or holds no version, a version of another VersionEpoch,
	// or a lower one; otherwise nothing changes and MapPublish fails with
	// ErrMapVersion. The key keeps the version of its last change with
	// one: a change without a version leaves it (as Centrifugo's brokers
	// do), a removal drops it. Removals ignore it.
	Version      uint64
	VersionEpoch string
	// IdempotencyKey, when not empty, makes the change idempotent per
	// channel (Centrifugo's idempotency_key on map_publish and
	// map_remove): a change with a key seen within IdempotentResultTTL
	// (which must then be positive) changes nothing and fails with
	// ErrMapDuplicate, returning the position of the first. Publications
	// and map changes of a channel share its keys. A change refused for
	// another reason (KeyMode, Version, ExpectedPosition, MaxKeys) does
	// not remember its key.
	IdempotencyKey      string
	IdempotentResultTTL time.Duration
	// ExpectedPosition, when set, makes the change a compare-and-swap
	// (Centrifugo's ExpectedPosition): it goes through only when the key
	// is in the state, set by the change at ExpectedPosition.Offset, and
	// the stream's epoch is ExpectedPosition.Epoch. Otherwise nothing
	// changes and MapPublish fails with ErrMapPositionMismatch, returning
	// the stream's current position. Removals take it too.
	ExpectedPosition *StreamPosition
}

// MapKeyMode is MapPublishOptions.KeyMode.
type MapKeyMode string

// Key modes, named as Centrifugo names them.
const (
	MapKeyReplace  MapKeyMode = ""
	MapKeyIfNew    MapKeyMode = "if_new"
	MapKeyIfExists MapKeyMode = "if_exists"
)

// Valid reports whether m is a key mode.
func (m MapKeyMode) Valid() bool {
	return m == MapKeyReplace || m == MapKeyIfNew || m == MapKeyIfExists
}

// Valid reports whether o keeps a stream, and gives an idempotency key
// a window.
func (o MapPublishOptions) Valid() bool {
	return o.StreamSize > 0 && o.StreamTTL > 0 && (o.IdempotencyKey == "" || o.IdempotentResultTTL > 0)
}

// MapStateRequest selects a page of a map channel's state.
type MapStateRequest struct {
	// Cursor is "" for the first page, then the previous page's Cursor.
	Cursor string
	// Key, when set, reads that key alone (Centrifugo's MapReadStateOptions.Key):
	// the page holds its entry, or none when it is not in the state, and
	// no Cursor; Cursor is ignored. A compare-and-swap reads the key's
	// position this way (the entry's Offset and the page's epoch).
	Key string
	// Limit is the most entries a page holds (positive).
	Limit int
	// MetaTTL keeps the stream's position (see HistoryRequest.MetaTTL).
	MetaTTL time.Duration
}

// MapStatePage is one page of a map channel's state.
type MapStatePage struct {
	// Entries are the keys' publications in key order; Offset of each is
	// the offset of the change that set it.
	Entries []*Publication
	// Cursor reads the next page; "" on the last page.
	Cursor string
	// Position is the stream's top when the page was read.
	Position StreamPosition
}

// MapStats describes a map channel.
type MapStats struct {
	NumKeys int
}

// ErrMapUnsupported is returned where a map operation reaches an engine
// that does not keep map state.
var ErrMapUnsupported = errors.New("map channels are not supported by this engine")

// ErrMapKeyLimit is returned by MapPublish for a new key of a channel
// that holds MapPublishOptions.MaxKeys keys.
var ErrMapKeyLimit = errors.New("map channel key limit reached")

// ErrMapKeyExists and ErrMapKeyNotFound are returned by MapPublish for a
// publication its KeyMode did not allow, ErrMapKeyNotFound also for a
// removal of a missing key with SkipMissingRemove; nothing changed.
var (
	ErrMapKeyExists   = errors.New("map key exists")
	ErrMapKeyNotFound = errors.New("map key not found")
	// ErrMapVersion is returned by MapPublish for a Version not above
	// the key's in the same VersionEpoch; nothing changed.
	ErrMapVersion = errors.New("map key holds this version or a newer one")
	// ErrMapDuplicate is returned by MapPublish for an IdempotencyKey
	// seen within its window, with the position of the change that first
	// carried it; nothing changed.
	ErrMapDuplicate = errors.New("map change with this idempotency key already made")
	// ErrMapPositionMismatch is returned by MapPublish when the key is not
	// where MapPublishOptions.ExpectedPosition says, with the stream's
	// current position; nothing changed.
	ErrMapPositionMismatch = errors.New("map key is not at the expected position")
)

// ErrBadCursor is returned by MapState for a cursor the engine did not make.
var ErrBadCursor = errors.New("bad map state cursor")
