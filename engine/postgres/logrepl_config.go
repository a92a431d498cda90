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
// docs/postgres.md, "Logical replication streams"). It is also the
// engine.postgres.logical section of the configuration file (see Config).
type LogicalConfig struct {
	// Enabled starts the consumer. The database needs wal_level =
	// logical and the engine's user the REPLICATION attribute.
	Enabled bool `yaml:"enabled" doc:"consume the replication slot that feeds the tables streamed in logical mode (one node at a time does; the others take over when it stops). Needs 'wal_level = logical' and a user with the REPLICATION attribute. See [postgres.md](postgres.md#logical-replication-streams)"`
	// DSN is the connection string of the replication connection and of
	// the session that holds the slot's ownership lock; empty means
	// Config.ListenDSN. Both need a direct connection, not a
	// transaction-mode pooler.
	DSN string `yaml:"dsn" defaultdoc:"'listen_dsn', else 'dsn'" doc:"a direct connection (not a transaction-mode pooler) for the replication connection and the slot's ownership lock"`
	// Slot names the replication slot; empty means <schema>_streams.
	Slot string `yaml:"slot" defaultdoc:"'<schema>_streams'" doc:"the replication slot's name"`
	// MaxRetainedBytes is the most WAL the slot may hold back
	// (pg_current_wal_lsn() - restart_lsn). Past it the slot is dropped
	// with an error log and the logical_slot_dropped_total metric, and a
	// new slot starts from the current position: changes in between are
	// not delivered, but the disk does not fill. Zero means
	// DefaultLogicalMaxRetained.
	MaxRetainedBytes int64 `yaml:"max_retained_bytes" default:"1073741824" doc:"the most WAL the slot may hold back (1 GiB); past it the slot is dropped with an error log and 'herald_postgres_logical_slot_dropped_total', losing the changes it held, so the disk never fills"`
	// CheckInterval paces the lag check and the takeover attempts of
	// nodes that do not own the slot.
	CheckInterval time.Duration `yaml:"check_interval" default:"5s" doc:"how often the owner reads the slot's lag and the other nodes try to take the slot over"`
	// StatusInterval is how often the last published position is
	// confirmed to PostgreSQL; a restart replays at most that much, which
	// the logical_progress table skips.
	StatusInterval time.Duration `yaml:"-"`
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
