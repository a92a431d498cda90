package consumer

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldhq/herald/internal/optionerr"
)

// PostgresConfig is a PostgreSQL outbox consumer, with Centrifugo's keys.
// The outbox table has Centrifugo's shape:
//
//	CREATE TABLE centrifugo_outbox (
//		id BIGSERIAL PRIMARY KEY,
//		method text NOT NULL,
//		payload JSONB NOT NULL,
//		partition INTEGER NOT NULL default 0,
//		created_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP NOT NULL
//	);
type PostgresConfig struct {
	DSN             string `yaml:"dsn" doc:"the database holding the outbox table, any database, e.g. 'postgres://user:pass@host:5432/app'"`
	OutboxTableName string `yaml:"outbox_table_name" doc:"the outbox table, optionally schema-qualified, with Centrifugo's columns: 'id' (bigserial), 'method', 'payload' (JSONB), 'partition'"`
	// NumPartitions: partitions 0 to NumPartitions-1 are read, each in
	// order, under an advisory lock so that one node at a time reads it.
	NumPartitions                int           `yaml:"num_partitions" default:"1" doc:"partitions 0 to N-1 are read, each in order by one node at a time (an advisory lock per partition)"`
	PartitionSelectLimit         int           `yaml:"partition_select_limit" default:"100" doc:"most rows applied, then deleted, in one transaction of a partition"`
	PartitionPollInterval        time.Duration `yaml:"partition_poll_interval" default:"300ms" doc:"how often an idle partition is polled"`
	PartitionNotificationChannel string        `yaml:"partition_notification_channel" doc:"a channel the producer NOTIFYs with the partition number after inserting; readers wake at once instead of at the next poll"`
	PartitionNotificationDSN     string        `yaml:"partition_notification_dsn" defaultdoc:"'dsn'" doc:"a direct session connection for LISTEN, when 'dsn' goes through a transaction-mode pooler"`
	// UseTryLock skips a partition another node holds instead of waiting
	// for its lock.
	UseTryLock bool `yaml:"use_try_lock" doc:"skip a partition another node holds (pg_try_advisory_xact_lock) instead of waiting for its lock"`
	// DeadLetterTableName receives the rows moved aside; created if
	// missing. Empty: OutboxTableName + "_dead_letter".
	DeadLetterTableName string `yaml:"dead_letter_table_name" defaultdoc:"outbox table + '_dead_letter'" doc:"the table that receives the rows moved aside, with the error; created if missing"`
}

// Defaults of PostgresConfig.
const (
	DefaultNumPartitions         = 1
	DefaultPartitionSelectLimit  = 100
	DefaultPartitionPollInterval = 300 * time.Millisecond
	// maxCountedLag bounds the rows counted for the lag metric.
	maxCountedLag = 10000
)

// tableName is a table, optionally schema-qualified, written as SQL
// takes it unquoted (so it folds to lower case as the producer's SQL does).
var tableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)

// PostgresSource reads an outbox table.
type PostgresSource struct {
	cfg       PostgresConfig
	lockNames []string
}

// Validate reports every problem of c, each an *optionerr.Error naming
// the field. A zero field takes its default and is not a problem.
func (c PostgresConfig) Validate() error {
	var errs optionerr.List
	bad := errs.Add
	if c.DSN == "" {
		bad("DSN", "required")
	} else if _, err := pgxpool.ParseConfig(c.DSN); err != nil {
		bad("DSN", "%v", err)
	}
	if c.PartitionNotificationDSN != "" {
		if _, err := pgx.ParseConfig(c.PartitionNotificationDSN); err != nil {
			bad("PartitionNotificationDSN", "%v", err)
		}
	}
	if !tableName.MatchString(c.OutboxTableName) {
		bad("OutboxTableName", "%q: want a table name, optionally schema-qualified (letters, digits, _)", c.OutboxTableName)
	}
	if c.DeadLetterTableName != "" && !tableName.MatchString(c.DeadLetterTableName) {
		bad("DeadLetterTableName", "%q: want a table name, optionally schema-qualified (letters, digits, _)", c.DeadLetterTableName)
	}
	if c.NumPartitions < 0 || c.NumPartitions > 1024 {
		bad("NumPartitions", "%d: want 1 to 1024", c.NumPartitions)
	}
	if c.PartitionSelectLimit < 0 {
		bad("PartitionSelectLimit", "%d: must be positive", c.PartitionSelectLimit)
	}
	if c.PartitionPollInterval < 0 {
		bad("PartitionPollInterval", "%s: must be positive", c.PartitionPollInterval)
	}
	return errors.Join(errs...)
}

// WithDefaults returns c with its zero fields set to their defaults.
func (c PostgresConfig) WithDefaults() PostgresConfig {
	if c.DeadLetterTableName == "" {
		c.DeadLetterTableName = c.OutboxTableName + "_dead_letter"
	}
	if c.NumPartitions == 0 {
		c.NumPartitions = DefaultNumPartitions
	}
	if c.PartitionSelectLimit == 0 {
		c.PartitionSelectLimit = DefaultPartitionSelectLimit
	}
	if c.PartitionPollInterval == 0 {
		c.PartitionPollInterval = DefaultPartitionPollInterval
	}
	return c
}

// NewPostgresSource checks cfg and applies its defaults.
func NewPostgresSource(cfg PostgresConfig) (*PostgresSource, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	s := &PostgresSource{cfg: cfg}
	for p := range cfg.NumPartitions {
		// The lock's name is the table's and the partition's, so that every
		// node (and Centrifugo's consumers would use their own) agrees.
		s.lockNames = append(s.lockNames, "herald_outbox_"+cfg.OutboxTableName+"_"+strconv.Itoa(p))
	}
	return s, nil
}

// Close implements Source.
func (s *PostgresSource) Close() {}

// Run implements Source: one reader per partition, woken by NOTIFY (when
// partition_notification_channel is set) or every partition_poll_interval.
func (s *PostgresSource) Run(ctx context.Context, env *Env) error {
	pcfg, err := pgxpool.ParseConfig(s.cfg.DSN)
	if err != nil {
		return err
	}
	// A connection per partition holds its lock during a batch; one more
	// serves the dead-letter table's creation and the lag counts.
	pcfg.MaxConns = int32(s.cfg.NumPartitions + 1)
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return fmt.Errorf("postgresql: %w", err)
	}
	defer pool.Close()
	if err := s.checkOutbox(ctx, pool); err != nil {
		return err
	}
	if err := s.prepareDeadLetter(ctx, pool); err != nil {
		return err
	}
	env.Up()
	health := &partitionHealth{env: env, down: map[int]error{}}

	wake := make([]chan struct{}, s.cfg.NumPartitions)
	for i := range wake {
		wake[i] = make(chan struct{}, 1)
	}
	var wg sync.WaitGroup
	if s.cfg.PartitionNotificationChannel != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.listen(ctx, env, wake)
		}()
	}
	for p := range s.cfg.NumPartitions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.readPartition(ctx, env, health, pool, p, wake[p])
		}()
	}
	wg.Wait()
	return nil
}

// readPartition applies partition p's rows until ctx is done. A batch
// that fails (the database unreachable, a row that cannot be moved aside)
// is retried with a backoff, and the partition is down meanwhile: it
// shows in the consumer's health and in herald_consumer_up until it makes
// progress again.
func (s *PostgresSource) readPartition(ctx context.Context, env *Env, health *partitionHealth, pool *pgxpool.Pool, p int, wake <-chan struct{}) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		n, err := s.batch(ctx, env, pool, p)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			health.set(p, fmt.Errorf("postgresql: partition %d: %w", p, err))
			env.Log.Warn("consumer: outbox partition failed, retrying", "partition", p, "error", err, "backoff", backoff)
			if sleep(ctx, backoff) != nil {
				return
			}
			backoff = min(2*backoff, 5*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		health.set(p, nil)
		if n == s.cfg.PartitionSelectLimit {
			continue // there may be more right away
		}
		t := time.NewTimer(s.cfg.PartitionPollInterval)
		select {
		case <-ctx.Done():
		case <-t.C:
		case <-wake:
		}
		t.Stop()
	}
}

// partitionHealth is the consumer's health made of its partitions': up
// only while none is failing. One partition that cannot make progress
// keeps the consumer down, whatever the others do.
type partitionHealth struct {
	env  *Env
	mu   sync.Mutex
	down map[int]error // failing partitions and why
}

// set records partition p's last outcome (nil: it made progress) and
// reports the consumer's health: the failure of the lowest failing
// partition, or up.
func (h *partitionHealth) set(p int, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		h.down[p] = err
	} else {
		delete(h.down, p)
	}
	if len(h.down) == 0 {
		h.env.Up()
		return
	}
	first := -1
	for q := range h.down {
		if first < 0 || q < first {
			first = q
		}
	}
	err = h.down[first]
	if len(h.down) > 1 {
		err = fmt.Errorf("%w (and %d more partitions failing)", err, len(h.down)-1)
	}
	h.env.Down(err)
}

type outboxRow struct {
	id      int64
	method  string
	payload []byte
}

// batch applies up to partition_select_limit rows of partition p in one
// transaction that holds the partition's lock, then deletes those applied
// (and moves those refused to the dead-letter table) and commits. A node
// killed before the commit deletes nothing: its rows are read again by
// the next holder of the lock. A row that cannot be moved aside ends the
// batch there: the rows applied before it are deleted and committed all
// the same (they were delivered, and must not be again), and the error is
// returned, so that the partition retries from that row, down meanwhile.
// It returns the rows read.
func (s *PostgresSource) batch(ctx context.Context, env *Env, pool *pgxpool.Pool, p int) (int, error) {
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return 0, fmt.Errorf("begin: %w", err)
	}
	// The end of the transaction must not depend on ctx: a stopping node
	// still commits what it applied.
	end, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	defer func() { _ = tx.Rollback(end) }()
	if s.cfg.UseTryLock {
		var got bool
		if err := tx.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock(hashtext($1))", s.lockNames[p]).Scan(&got); err != nil {
			return 0, fmt.Errorf("lock partition: %w", err)
		}
		if !got {
			return 0, nil // another node reads it
		}
	} else if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", s.lockNames[p]); err != nil {
		return 0, fmt.Errorf("lock partition: %w", err)
	}
	rows, err := tx.Query(ctx, `SELECT id, method, payload FROM `+s.cfg.OutboxTableName+
		` WHERE partition = $1 ORDER BY id LIMIT $2`, p, s.cfg.PartitionSelectLimit)
	if err != nil {
		return 0, fmt.Errorf("select: %w", err)
	}
	batch, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (outboxRow, error) {
		var o outboxRow
		err := r.Scan(&o.id, &o.method, &o.payload)
		return o, err
	})
	if err != nil {
		return 0, fmt.Errorf("select: %w", err)
	}
	done := make([]int64, 0, len(batch))
	var stuck error
	for _, row := range batch {
		err := env.Apply(ctx, row.method, row.payload)
		var dl *DeadLetter
		if errors.As(err, &dl) {
			if err := s.deadLetter(end, tx, p, row, dl); err != nil {
				stuck = fmt.Errorf("move row %d to %s: %w", row.id, s.cfg.DeadLetterTableName, err)
				break
			}
		} else if err != nil {
			break // stopping: the rest stay for later
		}
		done = append(done, row.id)
	}
	if len(done) > 0 {
		if _, err := tx.Exec(end, `DELETE FROM `+s.cfg.OutboxTableName+` WHERE id = ANY($1)`, done); err != nil {
			return 0, fmt.Errorf("delete applied rows: %w", err)
		}
	}
	if err := tx.Commit(end); err != nil {
		return 0, fmt.Errorf("commit: %w", err)
	}
	if stuck != nil {
		return len(done), stuck
	}
	if len(batch) == s.cfg.PartitionSelectLimit {
		// Counted after the commit: the count failing must not undo the
		// batch.
		var left int64
		if err := pool.QueryRow(end, `SELECT count(*) FROM (SELECT 1 FROM `+s.cfg.OutboxTableName+
			` WHERE partition = $1 LIMIT $2) AS t`, p, maxCountedLag).Scan(&left); err != nil {
			env.Log.Warn("consumer: outbox lag not counted", "partition", p, "error", err)
		} else {
			env.Lag(strconv.Itoa(p), left)
		}
	} else {
		env.Lag(strconv.Itoa(p), 0)
	}
	return len(batch), nil
}

// deadLetter moves row aside in a savepoint of tx, so that a failure
// leaves tx usable for committing the rows applied before it.
func (s *PostgresSource) deadLetter(ctx context.Context, tx pgx.Tx, p int, row outboxRow, dl *DeadLetter) error {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return err
	}
	if _, err := sp.Exec(ctx, `INSERT INTO `+s.cfg.DeadLetterTableName+
		` (id, method, payload, partition, error) VALUES ($1, $2, $3, $4, $5)`,
		row.id, row.method, row.payload, p, textValue(dl.Err.Error())); err != nil {
		_ = sp.Rollback(ctx)
		return err
	}
	return sp.Commit(ctx)
}

// textValue is s as a PostgreSQL text column holds it: valid UTF-8 and no
// NUL. An error's text may quote the refused payload's bytes.
func textValue(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\\x00")
}

// listen wakes partitions' readers on NOTIFY: the payload is the
// partition number, as Centrifugo's producers send it.
func (s *PostgresSource) listen(ctx context.Context, env *Env, wake []chan struct{}) {
	dsn := s.cfg.PartitionNotificationDSN
	if dsn == "" {
		dsn = s.cfg.DSN
	}
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := s.listenOnce(ctx, dsn, wake, func() { backoff = 100 * time.Millisecond })
		if ctx.Err() != nil {
			return
		}
		env.Log.Warn("consumer: outbox LISTEN connection failed, polling meanwhile", "error", err, "backoff", backoff)
		if sleep(ctx, backoff) != nil {
			return
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

func (s *PostgresSource) listenOnce(ctx context.Context, dsn string, wake []chan struct{}, listening func()) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer func() {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = conn.Close(c)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{s.cfg.PartitionNotificationChannel}.Sanitize()); err != nil {
		return err
	}
	listening()
	// Rows written while no one listened are found by this pass.
	for _, w := range wake {
		select {
		case w <- struct{}{}:
		default:
		}
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		p, err := strconv.Atoi(n.Payload)
		if err != nil || p < 0 || p >= len(wake) {
			continue // not one of ours: polling covers it
		}
		select {
		case wake[p] <- struct{}{}:
		default:
		}
	}
}
