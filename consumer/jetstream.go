package consumer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// JetStreamConfig is a NATS JetStream consumer, with Centrifugo's keys.
type JetStreamConfig struct {
	URL                 string
	StreamName          string
	Subjects            []string
	DurableConsumerName string
	DeliverPolicy       string // "new" or "all"
	// MaxAckPending bounds the messages delivered and not yet acknowledged,
	// across the nodes. 1 applies the stream's messages strictly in order
	// across nodes; more lets nodes apply messages side by side.
	MaxAckPending int
	MethodHeader  string
	// AckWait is how long a delivered message may stay unacknowledged
	// before JetStream delivers it again (to another node when its node
	// died).
	AckWait time.Duration
	// DeadLetterSubject receives the messages moved aside, with the
	// headers Herald-Error and the original ones; empty: they are only
	// terminated (JetStream then publishes its MSG_TERMINATED advisory).
	DeadLetterSubject string
}

// Defaults of JetStreamConfig.
const (
	DefaultMaxAckPending = 100
	DefaultMethodHeader  = "centrifugo-method"
	DefaultAckWait       = 30 * time.Second
	jetStreamFetch       = 100
)

// JetStreamSource reads a JetStream stream through a durable pull consumer
// and acknowledges each message after applying it.
type JetStreamSource struct {
	cfg JetStreamConfig
}

// NewJetStreamSource checks cfg and applies its defaults.
func NewJetStreamSource(cfg JetStreamConfig) (*JetStreamSource, error) {
	var errs []error
	if cfg.URL == "" {
		cfg.URL = nats.DefaultURL
	}
	if cfg.StreamName == "" {
		errs = append(errs, errors.New("nats_jetstream.stream_name: required"))
	}
	if cfg.DurableConsumerName == "" {
		errs = append(errs, errors.New("nats_jetstream.durable_consumer_name: required"))
	}
	switch cfg.DeliverPolicy {
	case "":
		cfg.DeliverPolicy = "new"
	case "new", "all":
	default:
		errs = append(errs, fmt.Errorf("nats_jetstream.deliver_policy: %q: want \"new\" or \"all\"", cfg.DeliverPolicy))
	}
	if cfg.MaxAckPending == 0 {
		cfg.MaxAckPending = DefaultMaxAckPending
	}
	if cfg.MaxAckPending < 0 {
		errs = append(errs, fmt.Errorf("nats_jetstream.max_ack_pending: %d: must be positive", cfg.MaxAckPending))
	}
	if cfg.MethodHeader == "" {
		cfg.MethodHeader = DefaultMethodHeader
	}
	if cfg.AckWait == 0 {
		cfg.AckWait = DefaultAckWait
	}
	if cfg.AckWait < time.Second {
		errs = append(errs, fmt.Errorf("nats_jetstream.ack_wait: %s: at least 1s", cfg.AckWait))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &JetStreamSource{cfg: cfg}, nil
}

// Close implements Source.
func (s *JetStreamSource) Close() {}

// Run implements Source.
func (s *JetStreamSource) Run(ctx context.Context, env *Env) error {
	nc, err := nats.Connect(s.cfg.URL, nats.Name("herald consumer "+env.Name), nats.MaxReconnects(-1))
	if err != nil {
		return fmt.Errorf("nats_jetstream: connect: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("nats_jetstream: %w", err)
	}
	policy := jetstream.DeliverNewPolicy
	if s.cfg.DeliverPolicy == "all" {
		policy = jetstream.DeliverAllPolicy
	}
	cc := jetstream.ConsumerConfig{
		Durable: s.cfg.DurableConsumerName, DeliverPolicy: policy, AckPolicy: jetstream.AckExplicitPolicy,
		MaxAckPending: s.cfg.MaxAckPending, AckWait: s.cfg.AckWait,
	}
	// One subject goes as FilterSubject, which servers before 2.10 (as
	// Debian 12 ships) take; several need FilterSubjects (2.10+).
	if len(s.cfg.Subjects) == 1 {
		cc.FilterSubject = s.cfg.Subjects[0]
	} else {
		cc.FilterSubjects = s.cfg.Subjects
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, s.cfg.StreamName, cc)
	if err != nil {
		return fmt.Errorf("nats_jetstream: consumer %q on stream %q: %w", s.cfg.DurableConsumerName, s.cfg.StreamName, err)
	}
	env.Up()
	for ctx.Err() == nil {
		batch, err := cons.Fetch(jetStreamFetch, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("nats_jetstream: fetch: %w", err)
		}
		for msg := range batch.Messages() {
			if err := s.apply(ctx, env, js, msg); err != nil {
				return err
			}
		}
		if err := batch.Error(); err != nil && ctx.Err() == nil && !errors.Is(err, nats.ErrTimeout) {
			return fmt.Errorf("nats_jetstream: fetch: %w", err)
		}
		env.Up()
		if info, err := cons.Info(ctx); err == nil {
			env.Lag(s.cfg.DurableConsumerName, int64(info.NumPending)+int64(info.NumAckPending))
		}
	}
	return nil
}

// apply applies one message and acknowledges it; a stopping node gives
// it back (Nak) so that another node applies it at once.
func (s *JetStreamSource) apply(ctx context.Context, env *Env, js jetstream.JetStream, msg jetstream.Msg) error {
	end, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if ctx.Err() != nil {
		_ = msg.Nak()
		return nil
	}
	err := env.Apply(ctx, msg.Headers().Get(s.cfg.MethodHeader), msg.Data())
	var dl *DeadLetter
	switch {
	case errors.As(err, &dl):
		if s.cfg.DeadLetterSubject != "" {
			out := nats.NewMsg(s.cfg.DeadLetterSubject)
			for k, v := range msg.Headers() {
				out.Header[k] = v
			}
			out.Header.Set("Herald-Error", dl.Err.Error())
			out.Header.Set("Herald-Subject", msg.Subject())
			out.Data = msg.Data()
			if _, err := js.PublishMsg(end, out); err != nil {
				return fmt.Errorf("nats_jetstream: move aside to %q: %w", s.cfg.DeadLetterSubject, err)
			}
		}
		if err := msg.Term(); err != nil {
			return fmt.Errorf("nats_jetstream: term: %w", err)
		}
	case err != nil:
		_ = msg.Nak()
	default:
		// DoubleAck waits for the server's confirmation, so a command is
		// not applied twice because an ack was lost on the way.
		if err := msg.DoubleAck(end); err != nil {
			return fmt.Errorf("nats_jetstream: ack: %w", err)
		}
	}
	return nil
}
