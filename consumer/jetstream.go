package consumer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/heraldhq/herald/internal/optionerr"
)

// JetStreamConfig is a NATS JetStream consumer, with Centrifugo's keys.
type JetStreamConfig struct {
	URL                 string   `yaml:"url" default:"nats://127.0.0.1:4222" doc:"the NATS server"`
	StreamName          string   `yaml:"stream_name" doc:"the stream to read"`
	Subjects            []string `yaml:"subjects" doc:"subjects of the stream to read (all: empty)"`
	DurableConsumerName string   `yaml:"durable_consumer_name" doc:"the durable pull consumer, created or updated on start and shared by the nodes"`
	DeliverPolicy       string   `yaml:"deliver_policy" default:"new" doc:"'new': messages from the consumer's creation; 'all': the whole stream"`
	// MaxAckPending bounds the messages delivered and not yet acknowledged,
	// across the nodes. 1 applies the stream's messages strictly in order
	// across nodes; more lets nodes apply messages side by side.
	MaxAckPending int    `yaml:"max_ack_pending" default:"100" doc:"messages delivered and not yet acknowledged, across the nodes; '1' applies them strictly in order across nodes"`
	MethodHeader  string `yaml:"method_header" default:"centrifugo-method" doc:"the header holding the method; without it the message is the '{\"method\",\"payload\"}' envelope"`
	// AckWait is how long a delivered message may stay unacknowledged
	// before JetStream delivers it again (to another node when its node
	// died).
	AckWait time.Duration `yaml:"ack_wait" default:"30s" doc:"a message not acknowledged within this is delivered again (to another node when its node died)"`
	// DeadLetterSubject receives the messages moved aside, with the
	// headers Herald-Error and the original ones; empty: they are only
	// terminated (JetStream then publishes its MSG_TERMINATED advisory).
	DeadLetterSubject string `yaml:"dead_letter_subject" doc:"messages moved aside are published here (a subject a stream captures) with the header 'Herald-Error'; empty: they are only terminated"`
}

// Defaults of JetStreamConfig.
const (
	DefaultDeliverPolicy = "new"
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

// Validate reports every problem of c, each an *optionerr.Error naming
// the field. A zero field takes its default and is not a problem.
func (c JetStreamConfig) Validate() error {
	var errs optionerr.List
	bad := errs.Add
	if c.StreamName == "" {
		bad("StreamName", "required")
	}
	if c.DurableConsumerName == "" {
		bad("DurableConsumerName", "required")
	}
	switch c.DeliverPolicy {
	case "", "new", "all":
	default:
		bad("DeliverPolicy", "%q: want \"new\" or \"all\"", c.DeliverPolicy)
	}
	if c.MaxAckPending < 0 {
		bad("MaxAckPending", "%d: must be positive", c.MaxAckPending)
	}
	if c.AckWait != 0 && c.AckWait < time.Second {
		bad("AckWait", "%s: at least 1s", c.AckWait)
	}
	return errors.Join(errs...)
}

// WithDefaults returns c with its zero fields set to their defaults.
func (c JetStreamConfig) WithDefaults() JetStreamConfig {
	if c.URL == "" {
		c.URL = nats.DefaultURL
	}
	if c.DeliverPolicy == "" {
		c.DeliverPolicy = DefaultDeliverPolicy
	}
	if c.MaxAckPending == 0 {
		c.MaxAckPending = DefaultMaxAckPending
	}
	if c.MethodHeader == "" {
		c.MethodHeader = DefaultMethodHeader
	}
	if c.AckWait == 0 {
		c.AckWait = DefaultAckWait
	}
	return c
}

// NewJetStreamSource checks cfg and applies its defaults.
func NewJetStreamSource(cfg JetStreamConfig) (*JetStreamSource, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &JetStreamSource{cfg: cfg.WithDefaults()}, nil
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
