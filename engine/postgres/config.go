package postgres

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"github.com/heraldhq/herald/engine/internal/precheck"
)

// Defaults used for zero fields of Config.
const (
	DefaultSchema   = "herald"
	DefaultPoolSize = 2
	// DefaultQueryPoolSize is the pool for history reads, presence, gap
	// repair and housekeeping, kept apart from publishing so that a burst
	// of reads never delays a publishing transaction.
	DefaultQueryPoolSize = 4
	DefaultShards        = 16
	// DefaultMaxBatch bounds the publications in one transaction.
	DefaultMaxBatch = 2000
	// DefaultMaxBatchBytes bounds the payload bytes in one transaction.
	DefaultMaxBatchBytes = 4 << 20
	// DefaultHistoryMetaTTL is how long a stream's position outlives its
	// last publication or read, as in Centrifugo.
	DefaultHistoryMetaTTL = 30 * 24 * time.Hour
	// DefaultSpillRetention keeps records too large for a notification
	// far longer than any node should lag behind the notification queue.
	DefaultSpillRetention = time.Hour
	DefaultWriteTimeout   = 10 * time.Second
	// DefaultJanitorInterval is how often expired presence and spilled
	// records are cleaned; streams are swept every
	// StreamSweepInterval.
	DefaultJanitorInterval     = time.Second
	DefaultStreamSweepInterval = 5 * time.Second
	// DefaultVacuumInterval is how often the janitor checks whether the
	// history table needs a VACUUM.
	DefaultVacuumInterval = 10 * time.Second
	// DefaultListenerPing is how long the listener waits for a
	// notification before it checks that its connection is alive.
	DefaultListenerPing = 5 * time.Second
	// DefaultMonitorInterval is how often pg_notification_queue_usage() is
	// read.
	DefaultMonitorInterval = 5 * time.Second
	// DefaultQueueWarnUsage is the notification queue usage (0..1) above
	// which the engine logs a warning.
	DefaultQueueWarnUsage = 0.25
	DefaultReconnectMin   = 50 * time.Millisecond
	// DefaultReconnectMax is short because every second the listener is
	// away after the database answers again is a second of publications
	// (from other nodes, or SQL) that it must repair from history, or,
	// without history, that its subscribers miss; a refused connection
	// attempt a second costs a down server nothing.
	DefaultReconnectMax = time.Second
)

// notifyChannels is the number of PostgreSQL notification channels, named
// <schema>_0 .. <schema>_15. It is part of the schema (publish() in SQL
// uses it too), so it is a constant rather than an option. Every node
// listens on all of them from one connection.
const notifyChannels = 16

// Config configures an Engine. It is also the engine.postgres section of
// Herald's configuration file: the yaml, default and doc tags are that
// file's keys, defaults (which withDefaults applies to zero fields, as a
// test checks) and documentation; fields tagged yaml:"-" are not in the
// file, set by the program or left to their defaults. The file names the
// databases itself (one dsn, or several as shards), so DSN is not tagged.
type Config struct {
	// DSN is the PostgreSQL connection string (URL or key=value) of the
	// publishing and query pools. Required.
	DSN string `yaml:"-"`
	// ListenDSN is the connection string of the one listening connection;
	// empty means DSN. Set it when DSN points at a transaction-mode pooler
	// (PgBouncer, RDS Proxy): LISTEN needs a session of its own.
	ListenDSN string `yaml:"listen_dsn" defaultdoc:"'dsn'" doc:"a direct session connection for the node's one LISTEN connection, when 'dsn' goes through a transaction-mode pooler"`
	// Schema holds the engine's tables and functions; it must be a
	// lowercase SQL identifier of at most 40 characters. Empty means
	// DefaultSchema.
	Schema string `yaml:"schema" default:"herald" doc:"the schema of Herald's tables and functions"`
	// NodeID names this node in the nodes and presence tables; empty
	// means a random id.
	NodeID string `yaml:"-"`
	// PoolSize is the number of publishing connections, and so of
	// publishing transactions in flight; zero means DefaultPoolSize.
	// Notifying transactions commit one at a time cluster-wide, so more
	// rarely helps.
	PoolSize int `yaml:"pool_size" default:"2" doc:"publishing connections per node (batches grow with fewer)"`
	// QueryPoolSize is the number of connections for everything else.
	QueryPoolSize int `yaml:"query_pool_size" default:"4" doc:"history and presence read connections per node"`
	// Shards is the number of goroutines that deliver to the handler,
	// each owning the channels that hash to it.
	Shards int `yaml:"-"`
	// MaxBatch and MaxBatchBytes bound one publishing transaction.
	MaxBatch      int `yaml:"-"`
	MaxBatchBytes int `yaml:"-"`
	// SynchronousCommitOff publishes with synchronous_commit=off: a
	// transaction returns before its WAL reaches disk, so a PostgreSQL
	// crash (not a clean restart) can lose the last few hundred
	// milliseconds of acknowledged publications, and subscribers may have
	// seen some of them. It raises throughput when the disk is slow.
	SynchronousCommitOff bool `yaml:"synchronous_commit_off" doc:"publish with 'synchronous_commit = off': more throughput, but a database crash may lose the last few milliseconds of publications"`
	// SkipMigrate leaves the schema alone at Start, for deployments that
	// apply the SQL themselves (see SQL and Migrate).
	SkipMigrate bool `yaml:"skip_migrate" doc:"do not create or migrate the schema on start; run 'herald migrate' (or apply 'herald migrate --sql') yourself"`
	// ListenerPing is how long the listener waits for a notification
	// before it pings its connection.
	ListenerPing time.Duration `yaml:"listener_ping" default:"5s" doc:"a quiet listening connection is pinged after this long and given as long again to answer, so one that died silently (no reset) is noticed within twice this"`
	// WriteTimeout bounds one publishing transaction and each database
	// read made for delivery.
	WriteTimeout time.Duration `yaml:"write_timeout" default:"10s" doc:"bounds one publishing transaction (a publish call waits at most twice this), each read made for delivery and each listener reconnect attempt; also the server-side 'idle_in_transaction_session_timeout' of publishing transactions"`

	// HistoryMetaTTL is how long a stream's position outlives its last
	// publication or read when PublishOptions and HistoryRequest leave
	// MetaTTL zero.
	HistoryMetaTTL time.Duration `yaml:"-"`
	// SpillRetention is how long a record too large for a notification is
	// kept for the nodes to read.
	SpillRetention time.Duration `yaml:"-"`
	// JanitorInterval, StreamSweepInterval and VacuumInterval pace the
	// housekeeping: expired presence and spilled records;
	// expired streams; vacuuming the history table.
	JanitorInterval     time.Duration `yaml:"-"`
	StreamSweepInterval time.Duration `yaml:"-"`
	VacuumInterval      time.Duration `yaml:"-"`
	// MonitorInterval is how often the notification queue usage is read,
	// and QueueWarnUsage the usage (0..1) above which a warning is logged.
	MonitorInterval time.Duration `yaml:"-"`
	QueueWarnUsage  float64       `yaml:"-"`
	// ReconnectMin and ReconnectMax bound the listener's reconnect backoff
	// and the retries of database reads made for delivery.
	ReconnectMin time.Duration `yaml:"-"`
	ReconnectMax time.Duration `yaml:"-"`

	// Logical configures the consumer of logical replication streams
	// (Herald's own: Centrifugo has no table streams).
	Logical LogicalConfig `yaml:"logical"`

	// Logger receives warnings (notification queue filling, listener
	// reconnects, gaps that could not be repaired); nil means
	// slog.Default().
	Logger *slog.Logger `yaml:"-"`
}

var schemaPattern = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,39}$`)

// checkSchema rejects names that are not plain identifiers, since the name
// is spliced into SQL and into notification channel names.
func checkSchema(schema string) error {
	if !schemaPattern.MatchString(schema) {
		return fmt.Errorf("schema %q: want a lowercase identifier of at most 40 characters", schema)
	}
	return nil
}

func (o Config) withDefaults() (Config, error) {
	if o.DSN == "" {
		return o, errors.New("postgres engine: DSN is required")
	}
	if o.ListenDSN == "" {
		o.ListenDSN = o.DSN
	}
	if o.Schema == "" {
		o.Schema = DefaultSchema
	}
	if err := checkSchema(o.Schema); err != nil {
		return o, fmt.Errorf("postgres engine: %w", err)
	}
	id, err := precheck.NodeID(o.NodeID)
	if err != nil {
		return o, fmt.Errorf("postgres engine: %w", err)
	}
	o.NodeID = id
	setInt(&o.PoolSize, DefaultPoolSize)
	setInt(&o.QueryPoolSize, DefaultQueryPoolSize)
	setInt(&o.Shards, DefaultShards)
	setInt(&o.MaxBatch, DefaultMaxBatch)
	setInt(&o.MaxBatchBytes, DefaultMaxBatchBytes)
	setDur(&o.HistoryMetaTTL, DefaultHistoryMetaTTL)
	setDur(&o.SpillRetention, DefaultSpillRetention)
	setDur(&o.WriteTimeout, DefaultWriteTimeout)
	setDur(&o.JanitorInterval, DefaultJanitorInterval)
	setDur(&o.StreamSweepInterval, DefaultStreamSweepInterval)
	setDur(&o.VacuumInterval, DefaultVacuumInterval)
	setDur(&o.ListenerPing, DefaultListenerPing)
	setDur(&o.MonitorInterval, DefaultMonitorInterval)
	setDur(&o.ReconnectMin, DefaultReconnectMin)
	setDur(&o.ReconnectMax, DefaultReconnectMax)
	if o.QueueWarnUsage <= 0 {
		o.QueueWarnUsage = DefaultQueueWarnUsage
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Logical, err = o.Logical.withDefaults(o); err != nil {
		return o, err
	}
	return o, nil
}

func setInt(v *int, def int) {
	if *v <= 0 {
		*v = def
	}
}

func setDur(v *time.Duration, def time.Duration) {
	if *v <= 0 {
		*v = def
	}
}
