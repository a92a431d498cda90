package consumer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/internal/optionerr"
)

// RedisStreamConfig is a Redis Streams consumer, with Centrifugo's keys
// (a standalone server only).
type RedisStreamConfig struct {
	// Address is one standalone server, a list of one as in Centrifugo's
	// file: "host:port" or a URL, "redis://[user:password@]host:port[/db]";
	// empty: DefaultRedisAddress.
	Address  []string `yaml:"address" defaultdoc:"'127.0.0.1:6379'" doc:"one standalone Redis server, as a list of one as in Centrifugo: 'host:port' or 'redis://[user:password@]host:port[/db]'"`
	User     string   `yaml:"user" doc:"Redis ACL credentials: the user name"`
	Password string   `yaml:"password" doc:"Redis ACL credentials: the password"`
	DB       int      `yaml:"db" doc:"database number"`
	// Streams are read each in order, by one node at a time: the node
	// that holds the stream's lease (see RedisStreamSource).
	Streams       []string `yaml:"streams" doc:"the streams to read; each is read in order by one node at a time"`
	ConsumerGroup string   `yaml:"consumer_group" doc:"the consumer group (created from the stream's start if missing)"`
	// VisibilityTimeout is the lease: a node that stops renewing it (it
	// died) loses the stream after this long, and the next holder claims
	// the messages it left unacknowledged.
	VisibilityTimeout time.Duration `yaml:"visibility_timeout" default:"30s" doc:"a node that stops renewing its stream lease (it died) loses the stream after this long; the next node claims what it left unacknowledged"`
	PayloadValue      string        `yaml:"payload_value" default:"payload" doc:"the field holding the request (or the '{\"method\",\"payload\"}' envelope)"`
	MethodValue       string        `yaml:"method_value" default:"method" doc:"the field holding the method; without it the payload is the envelope"`
	// DeadLetterSuffix names the stream receiving a stream's messages that
	// were moved aside: the stream's name followed by it.
	DeadLetterSuffix string `yaml:"dead_letter_suffix" default:":dead_letter" doc:"messages moved aside go to the stream named by the stream's name and this, with the fields 'herald_error' and 'herald_id'"`
}

// Defaults of RedisStreamConfig.
const (
	DefaultRedisAddress      = "127.0.0.1:6379"
	DefaultVisibilityTimeout = 30 * time.Second
	DefaultPayloadValue      = "payload"
	DefaultMethodValue       = "method"
	DefaultDeadLetterSuffix  = ":dead_letter"
	redisReadCount           = 100
)

// RedisStreamSource reads Redis streams through a consumer group: XREADGROUP,
// XACK after apply, and XAUTOCLAIM of the messages a dead node left.
//
// A consumer group alone hands one stream's messages to every member at
// once, so two nodes would apply them out of order. So each stream also
// has a lease (a key set with NX and a time to live of
// visibility_timeout, renewed a third of it): only its holder reads the
// stream. A new holder first claims every message still pending in the
// group (XAUTOCLAIM), in order, then reads new ones.
type RedisStreamSource struct {
	cfg RedisStreamConfig
}

// Validate reports every problem of c, each an *optionerr.Error naming
// the field. A zero field takes its default and is not a problem.
func (c RedisStreamConfig) Validate() error {
	var errs optionerr.List
	bad := errs.Add
	if len(c.Address) > 1 {
		bad("Address", "one standalone server: Redis Cluster and sharding over several servers are not available for consumers")
	} else if _, err := c.options(); err != nil {
		bad("Address", "%v", err)
	}
	if len(c.Streams) == 0 {
		bad("Streams", "at least one stream is required")
	}
	for i, s := range c.Streams {
		if s == "" {
			bad(fmt.Sprintf("Streams[%d]", i), "empty")
		}
	}
	if c.ConsumerGroup == "" {
		bad("ConsumerGroup", "required")
	}
	if c.VisibilityTimeout != 0 && c.VisibilityTimeout < 300*time.Millisecond {
		bad("VisibilityTimeout", "%s: at least 300ms", c.VisibilityTimeout)
	}
	return errors.Join(errs...)
}

// WithDefaults returns c with its zero fields set to their defaults.
func (c RedisStreamConfig) WithDefaults() RedisStreamConfig {
	if len(c.Address) == 0 || c.Address[0] == "" {
		c.Address = []string{DefaultRedisAddress}
	}
	if c.VisibilityTimeout == 0 {
		c.VisibilityTimeout = DefaultVisibilityTimeout
	}
	if c.PayloadValue == "" {
		c.PayloadValue = DefaultPayloadValue
	}
	if c.MethodValue == "" {
		c.MethodValue = DefaultMethodValue
	}
	if c.DeadLetterSuffix == "" {
		c.DeadLetterSuffix = DefaultDeadLetterSuffix
	}
	return c
}

// NewRedisStreamSource checks cfg and applies its defaults.
func NewRedisStreamSource(cfg RedisStreamConfig) (*RedisStreamSource, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &RedisStreamSource{cfg: cfg.WithDefaults()}, nil
}

// Close implements Source.
func (s *RedisStreamSource) Close() {}

// options are the client's options: the address's, then the fields set.
func (c RedisStreamConfig) options() (*redis.Options, error) {
	addr := DefaultRedisAddress
	if len(c.Address) > 0 && c.Address[0] != "" {
		addr = c.Address[0]
	}
	opts := &redis.Options{Addr: addr}
	if strings.Contains(addr, "://") {
		var err error
		if opts, err = redis.ParseURL(addr); err != nil {
			return nil, err
		}
	}
	if c.User != "" {
		opts.Username = c.User
	}
	if c.Password != "" {
		opts.Password = c.Password
	}
	if c.DB != 0 {
		opts.DB = c.DB
	}
	opts.PoolSize = 2*len(c.Streams) + 2
	// XREADGROUP blocks up to a second: the read must wait longer.
	opts.ReadTimeout = 3 * time.Second
	return opts, nil
}

// Run implements Source.
func (s *RedisStreamSource) Run(ctx context.Context, env *Env) error {
	opts, err := s.cfg.options()
	if err != nil {
		return err
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	for _, st := range s.cfg.Streams {
		// From the stream's start: messages a producer wrote before the
		// group existed are applied too.
		err := rdb.XGroupCreateMkStream(ctx, st, s.cfg.ConsumerGroup, "0").Err()
		if err != nil && !strings.Contains(err.Error(), "BUSYGROUP") {
			return fmt.Errorf("redis_stream: create group %q on %q: %w", s.cfg.ConsumerGroup, st, err)
		}
	}
	env.Up()
	var wg sync.WaitGroup
	for _, st := range s.cfg.Streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.stream(ctx, env, rdb, st)
		}()
	}
	wg.Wait()
	return nil
}

// renewLease extends the lease only while this node holds it.
var renewLease = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return 0`)

// releaseLease deletes the lease only while this node holds it.
var releaseLease = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

// stream takes the stream's lease whenever it is free and reads the
// stream while it holds it.
func (s *RedisStreamSource) stream(ctx context.Context, env *Env, rdb *redis.Client, st string) {
	lease := st + ":herald_lease:" + s.cfg.ConsumerGroup
	ttl := s.cfg.VisibilityTimeout
	for ctx.Err() == nil {
		got, err := rdb.SetNX(ctx, lease, env.Node, ttl).Result()
		if err != nil {
			if ctx.Err() == nil {
				env.Down(fmt.Errorf("redis_stream %q: %w", st, err))
			}
		} else {
			env.Up()
			if got {
				s.hold(ctx, env, rdb, st, lease)
				continue
			}
		}
		if sleep(ctx, ttl/3) != nil {
			return
		}
	}
}

// hold reads the stream while the lease is renewed, and releases it.
func (s *RedisStreamSource) hold(ctx context.Context, env *Env, rdb *redis.Client, st, lease string) {
	holdCtx, lost := context.WithCancel(ctx)
	defer lost()
	ttl := s.cfg.VisibilityTimeout
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		for sleep(holdCtx, ttl/3) == nil {
			n, err := renewLease.Run(holdCtx, rdb, []string{lease}, env.Node, ttl.Milliseconds()).Int()
			if err != nil || n == 0 {
				if holdCtx.Err() == nil {
					env.Log.Warn("consumer: lost the stream's lease", "stream", st, "error", err)
				}
				lost()
				return
			}
		}
	}()
	err := s.read(holdCtx, env, rdb, st)
	lost()
	<-renewed
	if err != nil && ctx.Err() == nil {
		env.Down(fmt.Errorf("redis_stream %q: %w", st, err))
		env.Log.Warn("consumer: reading the stream failed", "stream", st, "error", err)
		_ = sleep(ctx, 100*time.Millisecond)
	}
	c, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	_ = releaseLease.Run(c, rdb, []string{lease}, env.Node).Err()
}

// read applies the messages left pending in the group (by this node or a
// dead one), then new ones, until ctx is done.
func (s *RedisStreamSource) read(ctx context.Context, env *Env, rdb *redis.Client, st string) error {
	start := "0-0"
	for {
		msgs, next, err := rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{
			Stream: st, Group: s.cfg.ConsumerGroup, Consumer: env.Node, Start: start, Count: redisReadCount,
		}).Result()
		if err != nil {
			return fmt.Errorf("XAUTOCLAIM: %w", err)
		}
		if err := s.applyAll(ctx, env, rdb, st, msgs); err != nil {
			return err
		}
		if next == "0-0" {
			break
		}
		start = next
	}
	for ctx.Err() == nil {
		res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: s.cfg.ConsumerGroup, Consumer: env.Node, Streams: []string{st, ">"},
			Count: redisReadCount, Block: time.Second,
		}).Result()
		if errors.Is(err, redis.Nil) {
			s.reportLag(ctx, env, rdb, st)
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("XREADGROUP: %w", err)
		}
		env.Up()
		for _, r := range res {
			if err := s.applyAll(ctx, env, rdb, st, r.Messages); err != nil {
				return err
			}
		}
		s.reportLag(ctx, env, rdb, st)
	}
	return nil
}

// applyAll applies msgs in order and acknowledges each once applied or
// moved aside; it stops, without acknowledging, when ctx is done.
func (s *RedisStreamSource) applyAll(ctx context.Context, env *Env, rdb *redis.Client, st string, msgs []redis.XMessage) error {
	end, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	for _, m := range msgs {
		var err error
		payload, ok := m.Values[s.cfg.PayloadValue].(string)
		if !ok {
			err = env.Reject(fmt.Errorf("%w: no %q field", ErrMalformed, s.cfg.PayloadValue))
		} else {
			method, _ := m.Values[s.cfg.MethodValue].(string)
			err = env.Apply(ctx, method, []byte(payload))
		}
		var dl *DeadLetter
		if errors.As(err, &dl) {
			values := map[string]any{"herald_error": dl.Err.Error(), "herald_id": m.ID}
			for k, v := range m.Values {
				values[k] = v
			}
			if err := rdb.XAdd(end, &redis.XAddArgs{Stream: st + s.cfg.DeadLetterSuffix, Values: values}).Err(); err != nil {
				return fmt.Errorf("move %s aside: %w", m.ID, err)
			}
		} else if err != nil {
			return nil // stopping: unacknowledged, applied again later
		}
		if err := rdb.XAck(end, st, s.cfg.ConsumerGroup, m.ID).Err(); err != nil {
			return fmt.Errorf("XACK %s: %w", m.ID, err)
		}
	}
	return nil
}

// reportLag records the group's lag (entries not yet delivered to it) plus
// its pending entries (delivered, not acknowledged), as XINFO GROUPS says.
func (s *RedisStreamSource) reportLag(ctx context.Context, env *Env, rdb *redis.Client, st string) {
	groups, err := rdb.XInfoGroups(ctx, st).Result()
	if err != nil {
		return
	}
	for _, g := range groups {
		if g.Name == s.cfg.ConsumerGroup {
			env.Lag(st, max(g.Lag, 0)+g.Pending)
		}
	}
}
