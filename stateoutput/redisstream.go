package stateoutput

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/internal/optionerr"
)

// RedisStreamConfig is the redis_stream section: a stream that gets one
// entry per event.
type RedisStreamConfig struct {
	Address string `yaml:"address" default:"127.0.0.1:6379" doc:"one Redis server: 'host:port' or 'redis://[user:password@]host:port[/db]' ('rediss://' for TLS)"`
	Stream  string `yaml:"stream" default:"herald:channel_state" doc:"the stream each event is added to (XADD), with the fields 'channel', 'type' and 'time_ms'"`
	MaxLen  int64  `yaml:"maxlen" doc:"trim the stream to about this many entries as events are added (XADD MAXLEN ~); 0: no trimming, the reader deletes what it has read"`
}

// Defaults of RedisStreamConfig.
const (
	DefaultRedisAddress = "127.0.0.1:6379"
	DefaultRedisStream  = "herald:channel_state"
)

// Validate reports every problem of c, each an *optionerr.Error.
func (c RedisStreamConfig) Validate() error {
	var errs optionerr.List
	if _, err := c.options(); err != nil {
		errs.Add("Address", "%v", err)
	}
	if c.MaxLen < 0 {
		errs.Add("MaxLen", "%d: must not be negative (0: no trimming)", c.MaxLen)
	}
	return errs.Err()
}

// options are the client's options, from the address.
func (c RedisStreamConfig) options() (*redis.Options, error) {
	switch {
	case c.Address == "":
		return nil, fmt.Errorf("required, e.g. %s", DefaultRedisAddress)
	case strings.Contains(c.Address, "://"):
		return redis.ParseURL(c.Address)
	}
	return &redis.Options{Addr: c.Address}, nil
}

// stream is c.Stream or its default.
func (c RedisStreamConfig) stream() string {
	if c.Stream == "" {
		return DefaultRedisStream
	}
	return c.Stream
}

// RedisStreamOutput adds each event to a stream as an entry with the
// fields channel, type and time_ms, a batch in one pipeline, so in order.
// A stream has no way to drop a repeat by a name of the writer's, so an
// event is added once per delivery: a batch delivered twice (a node
// killed after the XADDs, before the engine recorded the batch
// delivered) adds its entries twice, and the reader drops a repeat by
// keeping the last time_ms per channel.
type RedisStreamOutput struct {
	client *redis.Client
	stream string
	maxLen int64
}

func newRedisStream(c RedisStreamConfig) (*RedisStreamOutput, error) {
	opts, err := c.options()
	if err != nil {
		return nil, fmt.Errorf("redis_stream.address: %w", err)
	}
	return &RedisStreamOutput{client: redis.NewClient(opts), stream: c.stream(), maxLen: c.MaxLen}, nil
}

// NewRedisStreamOutput makes an output to c's stream; it connects on the
// first write.
func NewRedisStreamOutput(ctx context.Context, c RedisStreamConfig) (*RedisStreamOutput, error) {
	return openAs[*RedisStreamOutput](ctx, Config{Name: TypeRedisStream, Type: TypeRedisStream, RedisStream: c})
}

// Write implements Output.
func (o *RedisStreamOutput) Write(ctx context.Context, evs []Event) error {
	if len(evs) == 0 {
		return nil
	}
	_, err := o.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, e := range evs {
			p.XAdd(ctx, &redis.XAddArgs{
				Stream: o.stream, MaxLen: o.maxLen, Approx: o.maxLen > 0,
				Values: []any{"channel", e.Channel, "type", e.Type, "time_ms", e.TimeMs},
			})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("redis_stream: XADD to %s: %w", o.stream, err)
	}
	return nil
}

// Close implements Output.
func (o *RedisStreamOutput) Close() { _ = o.client.Close() }
