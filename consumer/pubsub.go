package consumer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/api/option"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/heraldhq/herald/internal/optionerr"
)

// TypeGooglePubSub is the Google Cloud Pub/Sub consumer's type.
const TypeGooglePubSub = "google_pub_sub"

// GooglePubSubConfig is a Google Cloud Pub/Sub consumer, with Centrifugo
// v6.9's keys (internal/configtypes GooglePubSubConsumerConfig) and
// Herald's dead_letter_topic. The client honours PUBSUB_EMULATOR_HOST,
// as every Pub/Sub client does, to reach the emulator.
type GooglePubSubConfig struct {
	ProjectID              string            `yaml:"project_id" doc:"Google Cloud project of the subscriptions"`
	Subscriptions          []string          `yaml:"subscriptions" doc:"IDs of the subscriptions to read; with message ordering on, messages of one ordering key are applied in order"`
	MaxOutstandingMessages int               `yaml:"max_outstanding_messages" default:"100" doc:"most messages received and not yet acknowledged, per subscription"`
	MaxOutstandingBytes    int               `yaml:"max_outstanding_bytes" default:"1000000" doc:"most bytes of messages received and not yet acknowledged, per subscription"`
	AuthMechanism          string            `yaml:"auth_mechanism" defaultdoc:"'default'" doc:"'default' (Application Default Credentials) or 'service_account' (the JSON key in credentials_file)"`
	CredentialsFile        string            `yaml:"credentials_file" doc:"a service account's JSON key, with auth_mechanism 'service_account'"`
	MethodAttribute        string            `yaml:"method_attribute" default:"centrifugo-method" doc:"the attribute holding the method; without it the data is the '{\"method\",\"payload\"}' envelope"`
	PublicationDataMode    AttributeDataMode `yaml:"publication_data_mode"`
	// DeadLetterTopic is Herald's: Centrifugo nacks a failed message,
	// leaving it to the subscription's dead-letter policy.
	DeadLetterTopic string `yaml:"dead_letter_topic" doc:"ID of the topic messages moved aside are published to, with the attributes 'herald-error' and 'herald-source', before they are acknowledged; empty: such a message is nacked, so the subscription's dead-letter policy moves it after its maximum delivery attempts, as with Centrifugo"`
}

// Defaults of GooglePubSubConfig, Centrifugo's.
const (
	DefaultPubSubMaxOutstandingMessages = 100
	DefaultPubSubMaxOutstandingBytes    = 1000000
	pubSubAuthDefault                   = "default"
	pubSubAuthServiceAccount            = "service_account"
	// pubSubReceiveGoroutines is Centrifugo's NumGoroutines.
	pubSubReceiveGoroutines = 10
	pubSubSettleTimeout     = 10 * time.Second
)

// Validate reports every problem of c, each an *optionerr.Error naming
// the field. A zero field takes its default and is not a problem.
func (c GooglePubSubConfig) Validate() error {
	var errs optionerr.List
	bad := errs.Add
	if c.ProjectID == "" {
		bad("ProjectID", "required")
	}
	if len(c.Subscriptions) == 0 {
		bad("Subscriptions", "at least one subscription is required")
	}
	switch strings.ToLower(c.AuthMechanism) {
	case "", pubSubAuthDefault:
	case pubSubAuthServiceAccount:
		if c.CredentialsFile == "" {
			bad("CredentialsFile", "required with auth_mechanism %q", pubSubAuthServiceAccount)
		}
	default:
		bad("AuthMechanism", "%q: want %q or %q", c.AuthMechanism, pubSubAuthDefault, pubSubAuthServiceAccount)
	}
	if c.MaxOutstandingMessages < 0 {
		bad("MaxOutstandingMessages", "%d: must be positive", c.MaxOutstandingMessages)
	}
	if c.MaxOutstandingBytes < 0 {
		bad("MaxOutstandingBytes", "%d: must be positive", c.MaxOutstandingBytes)
	}
	return errors.Join(errs...)
}

// WithDefaults returns c with its zero fields set to their defaults.
func (c GooglePubSubConfig) WithDefaults() GooglePubSubConfig {
	if c.MaxOutstandingMessages == 0 {
		c.MaxOutstandingMessages = DefaultPubSubMaxOutstandingMessages
	}
	if c.MaxOutstandingBytes == 0 {
		c.MaxOutstandingBytes = DefaultPubSubMaxOutstandingBytes
	}
	if c.MethodAttribute == "" {
		c.MethodAttribute = DefaultMethodHeader
	}
	return c
}

// GooglePubSubSource reads Pub/Sub subscriptions with streaming pull: a
// message is acknowledged after it was applied (or moved aside), nacked
// when the consumer stops first.
type GooglePubSubSource struct {
	cfg GooglePubSubConfig
}

// NewGooglePubSubSource checks cfg and applies its defaults.
func NewGooglePubSubSource(cfg GooglePubSubConfig) (*GooglePubSubSource, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &GooglePubSubSource{cfg: cfg.WithDefaults()}, nil
}

// Close implements Source.
func (s *GooglePubSubSource) Close() {}

// Run implements Source: one streaming pull per subscription. The first
// that fails ends Run with its error, and the Group runs it all again.
func (s *GooglePubSubSource) Run(ctx context.Context, env *Env) error {
	var opts []option.ClientOption
	if strings.EqualFold(s.cfg.AuthMechanism, pubSubAuthServiceAccount) {
		opts = append(opts, option.WithAuthCredentialsFile(option.ServiceAccount, s.cfg.CredentialsFile))
	}
	cl, err := pubsub.NewClient(ctx, s.cfg.ProjectID, opts...)
	if err != nil {
		return fmt.Errorf("google_pub_sub: client: %w", err)
	}
	defer cl.Close()
	// Receive retries what may pass on its own and says nothing of it:
	// asking for each subscription tells whether the source is reachable.
	// A subscriber role without pubsub.subscriptions.get may still
	// consume, so a refusal is no failure.
	for _, id := range s.cfg.Subscriptions {
		name := fmt.Sprintf("projects/%s/subscriptions/%s", s.cfg.ProjectID, id)
		_, err := cl.SubscriptionAdminClient.GetSubscription(ctx, &pubsubpb.GetSubscriptionRequest{Subscription: name})
		if ctx.Err() != nil {
			return nil
		}
		if err != nil && status.Code(err) != codes.PermissionDenied {
			return fmt.Errorf("google_pub_sub: subscription %s: %w", id, err)
		}
	}
	env.Up()
	var dlt *pubsub.Publisher
	if s.cfg.DeadLetterTopic != "" {
		dlt = cl.Publisher(s.cfg.DeadLetterTopic)
		defer dlt.Stop()
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for _, id := range s.cfg.Subscriptions {
		sub := cl.Subscriber(id)
		sub.ReceiveSettings.MaxOutstandingMessages = s.cfg.MaxOutstandingMessages
		sub.ReceiveSettings.MaxOutstandingBytes = s.cfg.MaxOutstandingBytes
		sub.ReceiveSettings.NumGoroutines = pubSubReceiveGoroutines
		wg.Go(func() {
			err := sub.Receive(rctx, func(mctx context.Context, m *pubsub.Message) { s.apply(mctx, env, dlt, id, m) })
			if err != nil && rctx.Err() == nil {
				once.Do(func() { first = fmt.Errorf("google_pub_sub: receive from %s: %w", id, err) })
				cancel()
			}
		})
	}
	wg.Wait()
	return first
}

// apply applies one message, then acknowledges or nacks it.
func (s *GooglePubSubSource) apply(ctx context.Context, env *Env, dlt *pubsub.Publisher, sub string, m *pubsub.Message) {
	method, data, err := attributeCommand(m.Attributes, s.cfg.MethodAttribute, s.cfg.PublicationDataMode.mode(), m.Data)
	if err == nil {
		err = env.Apply(ctx, method, data)
	} else {
		err = env.Reject(err)
	}
	var dl *DeadLetter
	switch {
	case err == nil:
		m.Ack()
	case !errors.As(err, &dl) || dlt == nil:
		// Stopping, or left to the subscription's dead-letter policy.
		m.Nack()
	default:
		attrs := make(map[string]string, len(m.Attributes)+2)
		for k, v := range m.Attributes {
			attrs[k] = v
		}
		attrs["herald-error"] = dl.Err.Error()
		attrs["herald-source"] = sub + "/" + m.ID
		end, cancel := context.WithTimeout(context.WithoutCancel(ctx), pubSubSettleTimeout)
		defer cancel()
		if _, err := dlt.Publish(end, &pubsub.Message{Data: m.Data, Attributes: attrs}).Get(end); err != nil {
			env.Log.Error("consumer: move aside failed; the message is received again", "subscription", sub, "error", err)
			m.Nack()
			return
		}
		m.Ack()
	}
}
