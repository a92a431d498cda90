package consumer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/heraldhq/herald/internal/optionerr"
)

// TypeAwsSqs is the AWS SQS consumer's type.
const TypeAwsSqs = "aws_sqs"

// AwsSqsConfig is an AWS SQS consumer, with Centrifugo v6.9's keys
// (internal/configtypes AwsSqsConsumerConfig; the long-poll wait is
// spelled wait_time_time there, and so here) and Herald's
// dead_letter_queue.
type AwsSqsConfig struct {
	Queues              []string      `yaml:"queues" doc:"URLs of the queues to read"`
	SNSEnvelope         bool          `yaml:"sns_envelope" doc:"each message is an SNS notification (an SQS subscription of an SNS topic without raw delivery): its 'Message' field is what is applied"`
	Region              string        `yaml:"region" doc:"AWS region of the queues; empty: the SDK's (AWS_REGION, the shared config)"`
	MaxNumberOfMessages int32         `yaml:"max_number_of_messages" default:"10" doc:"most messages received at once (SQS allows 1 to 10)"`
	PollWaitTime        time.Duration `yaml:"wait_time_time" default:"20s" doc:"long-poll wait of one receive, rounded to seconds (SQS allows up to 20s)"`
	VisibilityTimeout   time.Duration `yaml:"visibility_timeout" default:"30s" doc:"how long a received message is hidden from other readers; one not deleted by then (its node died, or it was left to the queue's redrive policy) is received again"`
	MaxConcurrency      int           `yaml:"max_concurrency" default:"1" doc:"messages of one receive applied at once; those of one FIFO message group are always applied one after the other"`
	CredentialsProfile  string        `yaml:"credentials_profile" doc:"shared credentials profile; empty: the SDK's default credential chain"`
	AssumeRoleARN       string        `yaml:"assume_role_arn" doc:"IAM role assumed (through STS) to read the queues"`
	MethodAttribute     string        `yaml:"method_attribute" default:"centrifugo-method" doc:"the message attribute holding the method; without it the body is the '{\"method\",\"payload\"}' envelope"`
	// LocalStackEndpoint replaces the SQS endpoint: LocalStack, ElasticMQ
	// or another server speaking SQS's protocol.
	LocalStackEndpoint  string            `yaml:"localstack_endpoint" doc:"SQS endpoint URL to use instead of AWS's: LocalStack, ElasticMQ or another server speaking SQS's protocol"`
	PublicationDataMode AttributeDataMode `yaml:"publication_data_mode"`
	// DeadLetterQueue is Herald's: Centrifugo leaves a failed message in
	// its queue, to the queue's redrive policy.
	DeadLetterQueue string `yaml:"dead_letter_queue" doc:"URL of the queue messages moved aside are sent to, with the attribute 'herald-error', before they are deleted; empty: such a message is left undeleted, so the queue's redrive policy moves it to its dead-letter queue after 'maxReceiveCount' receives, as with Centrifugo"`
}

// Defaults of AwsSqsConfig, Centrifugo's.
const (
	DefaultSqsMaxMessages        = 10
	DefaultSqsPollWaitTime       = 20 * time.Second
	DefaultSqsVisibilityTimeout  = 30 * time.Second
	DefaultSqsMaxConcurrency     = 1
	sqsMaxAttributes             = 10 // SQS's limit of message attributes
	sqsMessageGroupIDAttribute   = string(types.MessageSystemAttributeNameMessageGroupId)
	sqsHeraldErrorAttribute      = "herald-error"
	sqsHeraldSourceAttribute     = "herald-source"
	sqsDeleteBatch               = 10 // SQS's limit of a DeleteMessageBatch
	sqsReceiveRetryAfterFailure  = time.Second
	sqsSettleTimeout             = 10 * time.Second
	sqsMaxNumberOfMessagesLimit  = 10
	sqsMaxPollWaitTimeLimit      = 20 * time.Second
	sqsMaxVisibilityTimeoutLimit = 12 * time.Hour
)

// Validate reports every problem of c, each an *optionerr.Error naming
// the field. A zero field takes its default and is not a problem.
func (c AwsSqsConfig) Validate() error {
	var errs optionerr.List
	bad := errs.Add
	if len(c.Queues) == 0 {
		bad("Queues", "at least one queue URL is required")
	}
	if c.MaxNumberOfMessages < 0 || c.MaxNumberOfMessages > sqsMaxNumberOfMessagesLimit {
		bad("MaxNumberOfMessages", "%d: SQS allows 1 to %d", c.MaxNumberOfMessages, sqsMaxNumberOfMessagesLimit)
	}
	if c.PollWaitTime < 0 || c.PollWaitTime > sqsMaxPollWaitTimeLimit {
		bad("PollWaitTime", "%s: SQS allows up to %s", c.PollWaitTime, sqsMaxPollWaitTimeLimit)
	}
	if c.VisibilityTimeout < 0 || c.VisibilityTimeout > sqsMaxVisibilityTimeoutLimit {
		bad("VisibilityTimeout", "%s: SQS allows up to %s", c.VisibilityTimeout, sqsMaxVisibilityTimeoutLimit)
	}
	if c.MaxConcurrency < 0 {
		bad("MaxConcurrency", "%d: must be positive", c.MaxConcurrency)
	}
	return errors.Join(errs...)
}

// WithDefaults returns c with its zero fields set to their defaults.
func (c AwsSqsConfig) WithDefaults() AwsSqsConfig {
	if c.MaxNumberOfMessages == 0 {
		c.MaxNumberOfMessages = DefaultSqsMaxMessages
	}
	if c.PollWaitTime == 0 {
		c.PollWaitTime = DefaultSqsPollWaitTime
	}
	if c.VisibilityTimeout == 0 {
		c.VisibilityTimeout = DefaultSqsVisibilityTimeout
	}
	if c.MaxConcurrency == 0 {
		c.MaxConcurrency = DefaultSqsMaxConcurrency
	}
	if c.MethodAttribute == "" {
		c.MethodAttribute = DefaultMethodHeader
	}
	return c
}

// AwsSqsSource reads SQS queues: each received message is applied and
// then deleted. Messages of one FIFO message group are applied in order,
// and the group's rest is left for the next receive when one of them is
// left undeleted; other messages of a receive are applied up to
// max_concurrency at once.
type AwsSqsSource struct {
	cfg AwsSqsConfig
}

// NewAwsSqsSource checks cfg and applies its defaults.
func NewAwsSqsSource(cfg AwsSqsConfig) (*AwsSqsSource, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &AwsSqsSource{cfg: cfg.WithDefaults()}, nil
}

// Close implements Source.
func (s *AwsSqsSource) Close() {}

// client builds the SQS client as Centrifugo does: the SDK's default
// configuration in the region, a profile, an assumed role, an endpoint.
func (s *AwsSqsSource) client(ctx context.Context) (*sqs.Client, error) {
	var opts []func(*awsconfig.LoadOptions) error
	if s.cfg.Region != "" {
		opts = append(opts, awsconfig.WithRegion(s.cfg.Region))
	}
	if s.cfg.CredentialsProfile != "" {
		opts = append(opts, awsconfig.WithSharedConfigProfile(s.cfg.CredentialsProfile))
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("aws_sqs: load the AWS configuration: %w", err)
	}
	if s.cfg.AssumeRoleARN != "" {
		awsCfg.Credentials = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(sts.NewFromConfig(awsCfg), s.cfg.AssumeRoleARN))
	}
	return sqs.NewFromConfig(awsCfg, func(o *sqs.Options) {
		if s.cfg.LocalStackEndpoint != "" {
			o.BaseEndpoint = aws.String(s.cfg.LocalStackEndpoint)
		}
	}), nil
}

// Run implements Source: one reader per queue.
func (s *AwsSqsSource) Run(ctx context.Context, env *Env) error {
	cl, err := s.client(ctx)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	for _, q := range s.cfg.Queues {
		wg.Go(func() { s.readQueue(ctx, env, cl, q) })
	}
	wg.Wait()
	return nil
}

// readQueue receives from one queue until ctx is done. A failed receive
// marks the source down and is tried again after a second: one queue
// failing must not stop the others.
func (s *AwsSqsSource) readQueue(ctx context.Context, env *Env, cl *sqs.Client, queue string) {
	wait := max(int32(s.cfg.PollWaitTime/time.Second), 1)
	visibility := max(int32(s.cfg.VisibilityTimeout/time.Second), 1)
	for ctx.Err() == nil {
		out, err := cl.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl:                    aws.String(queue),
			MaxNumberOfMessages:         s.cfg.MaxNumberOfMessages,
			WaitTimeSeconds:             wait,
			VisibilityTimeout:           visibility,
			MessageAttributeNames:       []string{"All"},
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		})
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			env.Down(fmt.Errorf("aws_sqs: receive from %s: %w", queue, err))
			if sleep(ctx, sqsReceiveRetryAfterFailure) != nil {
				return
			}
			continue
		}
		env.Up()
		done := s.applyAll(ctx, env, cl, queue, out.Messages)
		s.delete(ctx, env, cl, queue, done)
	}
}

// applyAll applies one receive's messages and returns those to delete:
// applied, or moved to dead_letter_queue.
func (s *AwsSqsSource) applyAll(ctx context.Context, env *Env, cl *sqs.Client, queue string, msgs []types.Message) []types.Message {
	// A unit is applied in order: one FIFO group's messages, or one
	// message of a standard queue.
	var units [][]types.Message
	groups := map[string]int{}
	for _, m := range msgs {
		g := m.Attributes[sqsMessageGroupIDAttribute]
		if i, ok := groups[g]; ok && g != "" {
			units[i] = append(units[i], m)
			continue
		}
		if g != "" {
			groups[g] = len(units)
		}
		units = append(units, []types.Message{m})
	}
	var (
		mu   sync.Mutex
		done []types.Message
		wg   sync.WaitGroup
		sem  = make(chan struct{}, s.cfg.MaxConcurrency)
	)
	for _, unit := range units {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			for _, m := range unit {
				if !s.apply(ctx, env, cl, queue, m) {
					// The rest of a FIFO group waits for this one, which
					// SQS gives again first.
					return
				}
				mu.Lock()
				done = append(done, m)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return done
}

// apply applies one message and says whether it is to be deleted.
func (s *AwsSqsSource) apply(ctx context.Context, env *Env, cl *sqs.Client, queue string, m types.Message) bool {
	method, data, err := sqsCommand(s.cfg, m)
	if err == nil {
		err = env.Apply(ctx, method, data)
	} else {
		err = env.Reject(err)
	}
	var dl *DeadLetter
	if !errors.As(err, &dl) {
		return err == nil
	}
	if s.cfg.DeadLetterQueue == "" {
		// Left to the queue's redrive policy, as Centrifugo leaves it.
		return false
	}
	if err := s.moveAside(ctx, cl, queue, m, dl); err != nil {
		env.Log.Error("consumer: move aside failed; the message is received again", "queue", queue, "error", err)
		return false
	}
	return true
}

// sqsCommand decodes one message as Centrifugo does: the body (or the
// SNS envelope's Message), the method in the method attribute or the body
// the envelope, or a publication in publication data mode.
func sqsCommand(cfg AwsSqsConfig, m types.Message) (method string, data []byte, err error) {
	body := []byte(aws.ToString(m.Body))
	if cfg.SNSEnvelope {
		var n struct {
			Message *string `json:"Message"`
		}
		if err := json.Unmarshal(body, &n); err != nil || n.Message == nil {
			return "", nil, fmt.Errorf("%w: not an SNS notification with a Message", ErrMalformed)
		}
		body = []byte(*n.Message)
	}
	attrs := make(map[string]string, len(m.MessageAttributes))
	for k, v := range m.MessageAttributes {
		if v.StringValue != nil {
			attrs[k] = *v.StringValue
		}
	}
	return attributeCommand(attrs, cfg.MethodAttribute, cfg.PublicationDataMode.mode(), body)
}

// moveAside sends m to the dead-letter queue with its attributes and
// herald-error, herald-source (as many as SQS's limit of 10 leaves room
// for).
func (s *AwsSqsSource) moveAside(ctx context.Context, cl *sqs.Client, queue string, m types.Message, dl *DeadLetter) error {
	attrs := make(map[string]types.MessageAttributeValue, len(m.MessageAttributes)+2)
	for k, v := range m.MessageAttributes {
		attrs[k] = v
	}
	for _, a := range [][2]string{{sqsHeraldErrorAttribute, dl.Err.Error()}, {sqsHeraldSourceAttribute, queue}} {
		if len(attrs) < sqsMaxAttributes {
			attrs[a[0]] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(a[1])}
		}
	}
	in := &sqs.SendMessageInput{QueueUrl: aws.String(s.cfg.DeadLetterQueue), MessageBody: m.Body, MessageAttributes: attrs}
	if g := m.Attributes[sqsMessageGroupIDAttribute]; g != "" {
		// A FIFO queue's dead-letter queue is FIFO too: the group keeps
		// the order, the message ID makes a retried send one message.
		in.MessageGroupId, in.MessageDeduplicationId = aws.String(g), m.MessageId
	}
	end, cancel := context.WithTimeout(context.WithoutCancel(ctx), sqsSettleTimeout)
	defer cancel()
	if _, err := cl.SendMessage(end, in); err != nil {
		return fmt.Errorf("aws_sqs: send to %s: %w", s.cfg.DeadLetterQueue, err)
	}
	return nil
}

// delete deletes the messages done, in batches. It runs after ctx is
// done too: what was applied is acknowledged. A message it fails to
// delete is received and applied again after the visibility timeout
// (an idempotency key makes that harmless).
func (s *AwsSqsSource) delete(ctx context.Context, env *Env, cl *sqs.Client, queue string, done []types.Message) {
	end, cancel := context.WithTimeout(context.WithoutCancel(ctx), sqsSettleTimeout)
	defer cancel()
	for start := 0; start < len(done); start += sqsDeleteBatch {
		batch := done[start:min(start+sqsDeleteBatch, len(done))]
		entries := make([]types.DeleteMessageBatchRequestEntry, len(batch))
		for i, m := range batch {
			entries[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(i)), ReceiptHandle: m.ReceiptHandle}
		}
		out, err := cl.DeleteMessageBatch(end, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(queue), Entries: entries})
		if err != nil {
			env.Log.Error("consumer: delete failed; the messages are applied again", "queue", queue, "messages", len(batch), "error", err)
			continue
		}
		for _, f := range out.Failed {
			env.Log.Error("consumer: delete failed; the message is applied again", "queue", queue, "error", aws.ToString(f.Message))
		}
	}
}
