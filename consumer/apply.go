package consumer

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/heraldhq/herald/internal/optionerr"
	"github.com/heraldhq/herald/protocol"
)

// Executor applies API commands; *api.Executor is one.
type Executor interface {
	Execute(ctx context.Context, method string, body []byte) (any, error)
}

// Retry bounds the attempts at one command.
type Retry struct {
	// MaxRetries is how many times a command whose failure may pass is
	// tried again before it is moved aside.
	MaxRetries int `yaml:"max_retries" default:"5" doc:"retries of a command that failed with an error that may pass (100, 111) before the message is moved aside; '-1': none. A command that cannot succeed (malformed, unknown method, bad request) is moved aside at once"`
	// MinBackoff is the wait before the first retry; each next one
	// doubles, up to MaxBackoff.
	MinBackoff time.Duration `yaml:"retry_min_backoff" default:"100ms" doc:"wait before the first retry; it doubles for each next one"`
	MaxBackoff time.Duration `yaml:"retry_max_backoff" default:"5s" doc:"longest wait between retries"`
}

// validate refuses negative backoffs, which WithDefaults would otherwise
// silently replace.
func (r Retry) validate() error {
	var errs optionerr.List
	if r.MinBackoff < 0 {
		errs.Add("MinBackoff", "%s: must not be negative", r.MinBackoff)
	}
	if r.MaxBackoff < 0 {
		errs.Add("MaxBackoff", "%s: must not be negative", r.MaxBackoff)
	}
	return errs.Err()
}

// Defaults of Retry.
const (
	DefaultMaxRetries = 5
	DefaultMinBackoff = 100 * time.Millisecond
	DefaultMaxBackoff = 5 * time.Second
)

// WithDefaults returns r with its zero fields set to their defaults.
func (r Retry) WithDefaults() Retry {
	if r.MaxRetries == 0 {
		r.MaxRetries = DefaultMaxRetries
	}
	if r.MaxRetries < 0 {
		r.MaxRetries = 0
	}
	if r.MinBackoff <= 0 {
		r.MinBackoff = DefaultMinBackoff
	}
	if r.MaxBackoff < r.MinBackoff {
		r.MaxBackoff = max(DefaultMaxBackoff, r.MinBackoff)
	}
	return r
}

// Applier applies one message of a source: the method given apart (or
// "") and the data, decoded as Decode says. It returns nil when the
// command was applied, a *DeadLetter when it failed for good (the source
// moves the message aside and goes on), or the context's error when the
// consumer is stopping (the source must not acknowledge the message).
type Applier func(ctx context.Context, method string, data []byte) error

// DeadLetter is the failure of a message that is to be moved aside.
type DeadLetter struct {
	Err error
}

func (d *DeadLetter) Error() string { return "dead letter: " + d.Err.Error() }
func (d *DeadLetter) Unwrap() error { return d.Err }

// DefaultMaxMessageSize is Config.MaxMessageSize when it is 0: the server
// API's default body limit (api.DefaultMaxBodySize), so that a command is
// bounded alike whichever way it comes.
const DefaultMaxMessageSize = 1 << 20

// applier returns the Applier of one consumer; maxSize is
// Config.MaxMessageSize.
func applier(name string, exec Executor, retry Retry, maxSize int64, m *metrics, log *slog.Logger) Applier {
	retry = retry.WithDefaults()
	if maxSize == 0 {
		maxSize = DefaultMaxMessageSize
	}
	return func(ctx context.Context, method string, data []byte) error {
		if maxSize > 0 && int64(len(data)) > maxSize {
			m.oversized.WithLabelValues(name).Inc()
			m.failed.WithLabelValues(name).Inc()
			err := fmt.Errorf("message of %d bytes, over max_message_size %d", len(data), maxSize)
			log.Error("consumer: message moved aside", "consumer", name, "error", err)
			return &DeadLetter{Err: err}
		}
		cmd, err := Decode(method, data)
		if err != nil {
			m.failed.WithLabelValues(name).Inc()
			log.Error("consumer: message moved aside", "consumer", name, "error", err)
			return &DeadLetter{Err: err}
		}
		backoff := retry.MinBackoff
		for attempt := 0; ; attempt++ {
			_, err := exec.Execute(ctx, cmd.Method, cmd.Payload)
			if err == nil {
				m.applied.WithLabelValues(name).Inc()
				return nil
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// The executor answers with the API's coded error, which
			// says whether a retry may succeed.
			if !protocol.IsTemporary(err) || attempt >= retry.MaxRetries {
				m.failed.WithLabelValues(name).Inc()
				log.Error("consumer: command failed, moved aside", "consumer", name, "method", cmd.Method, "attempts", attempt+1, "error", err)
				return &DeadLetter{Err: err}
			}
			m.retried.WithLabelValues(name).Inc()
			log.Warn("consumer: command failed, retrying", "consumer", name, "method", cmd.Method, "attempt", attempt+1, "backoff", backoff, "error", err)
			if err := sleep(ctx, backoff); err != nil {
				return err
			}
			backoff = min(2*backoff, retry.MaxBackoff)
		}
	}
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
