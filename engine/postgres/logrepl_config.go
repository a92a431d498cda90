package postgres

import (
	"fmt"
	"regexp"
	"time"
)

// Defaults for zero fields of LogicalConfig.
const (
	// DefaultLogicalMaxRetained is how much WAL the slot may hold back
	// before it is dropped.
	DefaultLogicalMaxRetained = 1 << 30
	// DefaultLogicalCheckInterval paces the slot lag check and a standby
	// node's attempts to take the slot over.
	DefaultLogicalCheckInterval = 5 * time.Second
	// DefaultLogicalStatusInterval is how often the position of the last
	// published transaction is confirmed to PostgreSQL.
	DefaultLogicalStatusInterval = time.Second
)

// LogicalConfig configures the consumer of the replication slot that
// feeds tables streamed with stream_table(..., mode => 'logical'). Every
// node may enable it; one node at a time consumes the slot (see
// docs/postgres.md, "Logical replication streams").
type LogicalConfig struct {
	// Enabled starts the consumer. The database needs wal_level =
	// logical and the engine's user the REPLICATION attribute.
	Enabled bool
	// DSN is the connection string of the replication connection and of
	// the session that holds the slot's ownership lock; empty means
	// Config.ListenDSN. Both need a direct connection, not a
	// transaction-mode pooler.
	DSN string
	// Slot names the replication slot; empty means <schema>_streams.
	Slot string
	// MaxRetainedBytes is the most WAL the slot may hold back
	// (pg_current_wal_lsn() - restart_lsn). Past it the slot is dropped
	// with an error log and the logical_slot_dropped_total metric, and a
	// new slot starts from the current position: changes in between are
	// not delivered, but the disk does not fill. Zero means
	// DefaultLogicalMaxRetained.
	MaxRetainedBytes int64
	// CheckInterval paces the lag check and the takeover attempts of
	// nodes that do not own the slot.
	CheckInterval time.Duration
	// StatusInterval is how often the last published position is
	// confirmed to PostgreSQL; a restart replays at most that much, which
	// the logical_progress table skips.
	StatusInterval time.Duration
}

var slotPattern = regexp.MustCompile(`^[a-z0-9_]{1,63}$`)

func (l LogicalConfig) withDefaults(o Config) (LogicalConfig, error) {
	if l.DSN == "" {
		l.DSN = o.ListenDSN
	}
	if l.Slot == "" {
		l.Slot = o.Schema + "_streams"
	}
	if !slotPattern.MatchString(l.Slot) {
		return l, fmt.Errorf("postgres engine: logical slot %q: want lowercase letters, digits and '_', at most 63", l.Slot)
	}
	switch {
	case l.MaxRetainedBytes < 0:
		return l, fmt.Errorf("postgres engine: logical max retained bytes %d: want 0 (the default, %d) or more", l.MaxRetainedBytes, DefaultLogicalMaxRetained)
	case l.MaxRetainedBytes == 0:
		l.MaxRetainedBytes = DefaultLogicalMaxRetained
	}
	setDur(&l.CheckInterval, DefaultLogicalCheckInterval)
	setDur(&l.StatusInterval, DefaultLogicalStatusInterval)
	return l, nil
}
