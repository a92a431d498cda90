package memory

import (
	"time"

	"github.com/heraldhq/herald/engine/internal/precheck"
)

// Defaults used for zero fields of Config.
const (
	// DefaultHistoryMetaTTL is how long a stream's top offset and epoch
	// outlive its last publication or read, as in Centrifugo.
	DefaultHistoryMetaTTL = 30 * 24 * time.Hour
	// DefaultShards is the number of lock stripes and map shards.
	DefaultShards = 64
	// DefaultJanitorInterval is how often expired streams and presence
	// entries are cleaned.
	DefaultJanitorInterval = time.Second
	// DefaultJanitorBatch bounds the expired items one shard handles per
	// janitor tick.
	DefaultJanitorBatch = 1000
)

// Config configures an Engine. The zero value is ready to use.
type Config struct {
	// NodeID is this node's id (engine.Broker.NodeID); empty means a
	// random one.
	NodeID string
	// Now is the clock for history and presence expiry and for
	// Publication.Time; nil means time.Now. Tests pass a fake clock.
	Now func() time.Time
	// HistoryMetaTTL is the stream meta lifetime used when PublishOptions
	// or HistoryRequest leave MetaTTL zero; zero means
	// DefaultHistoryMetaTTL.
	HistoryMetaTTL time.Duration
	// Shards is how many independent lock stripes split the channels, so
	// that publishers to different channels rarely wait on one another;
	// zero means DefaultShards.
	Shards int
	// JanitorInterval is the period of the background cleanup of expired
	// streams and presence entries; zero means DefaultJanitorInterval.
	// Reads never see expired data whatever the interval: expiry is also
	// checked when a stream or presence set is touched.
	JanitorInterval time.Duration
	// JanitorBatch is the most expired items each shard cleans per tick,
	// which bounds how long a tick holds a shard's lock; zero means
	// DefaultJanitorBatch.
	JanitorBatch int
	// IdempotencyKeys bounds the idempotency keys the engine remembers at
	// once. A key is kept for its whole window; when this many are within
	// theirs, a publication with a new key fails with
	// engine.ErrIdempotencyFull. Zero means DefaultIdempotencyKeys.
	IdempotencyKeys int
}

func (o Config) withDefaults() Config {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.NodeID == "" {
		o.NodeID, _ = precheck.NodeID("") // an empty id always gets a random one
	}
	if o.IdempotencyKeys <= 0 {
		o.IdempotencyKeys = DefaultIdempotencyKeys
	}
	if o.HistoryMetaTTL <= 0 {
		o.HistoryMetaTTL = DefaultHistoryMetaTTL
	}
	if o.Shards <= 0 {
		o.Shards = DefaultShards
	}
	if o.JanitorInterval <= 0 {
		o.JanitorInterval = DefaultJanitorInterval
	}
	if o.JanitorBatch <= 0 {
		o.JanitorBatch = DefaultJanitorBatch
	}
	return o
}
