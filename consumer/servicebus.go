package consumer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"

	"github.com/heraldhq/herald/internal/optionerr"
)

// TypeAzureServiceBus is the Azure Service Bus consumer's type.
const TypeAzureServiceBus = "azure_service_bus"

// AzureServiceBusConfig is an Azure Service Bus consumer, with Centrifugo
// v6.9's keys (internal/configtypes AzureServiceBusConsumerConfig).
type AzureServiceBusConfig struct {
	ConnectionString        string           `yaml:"connection_string" doc:"the namespace's connection string ('Endpoint=sb://…;SharedAccessKeyName=…;SharedAccessKey=…'), unless use_azure_identity"`
	UseAzureIdentity        bool             `yaml:"use_azure_identity" doc:"authenticate with a Microsoft Entra ID service principal (tenant_id, client_id, client_secret) at fully_qualified_namespace instead of a connection string"`
	FullyQualifiedNamespace string           `yaml:"fully_qualified_namespace" doc:"the namespace's host, e.g. 'example.servicebus.windows.net', with use_azure_identity"`
	TenantID                string           `yaml:"tenant_id" doc:"the service principal's tenant, with use_azure_identity"`
	ClientID                string           `yaml:"client_id" doc:"the service principal's application (client) ID, with use_azure_identity"`
	ClientSecret            string           `yaml:"client_secret" doc:"the service principal's secret, with use_azure_identity"`
	Queues                  []string         `yaml:"queues" doc:"the queues to read"`
	UseSessions             bool             `yaml:"use_sessions" doc:"the queues are session-enabled: a session's messages are applied in order, by one receiver at a time"`
	MaxConcurrentCalls      int              `yaml:"max_concurrent_calls" default:"1" doc:"receivers per queue (sessions at once, with use_sessions); one keeps the queue's order"`
	MaxReceiveMessages      int              `yaml:"max_receive_messages" default:"1" doc:"most messages one receive returns"`
	MethodProperty          string           `yaml:"method_property" default:"centrifugo-method" doc:"the application property holding the method; without it the body is the '{\"method\",\"payload\"}' envelope"`
	PublicationDataMode     PropertyDataMode `yaml:"publication_data_mode"`
}

// Defaults of AzureServiceBusConfig, Centrifugo's.
const (
	DefaultServiceBusMaxConcurrentCalls = 1
	DefaultServiceBusMaxReceiveMessages = 1
	serviceBusRetryAfterFailure         = time.Second
	serviceBusSettleTimeout             = 10 * time.Second
	// serviceBusSessionIdle is how long a session receiver waits for
	// the session's next message before it lets the session go, so that
	// a receiver is not held by a quiet session while others wait.
	serviceBusSessionIdle      = 5 * time.Second
	serviceBusDeadLetterReason = "herald"
)

// Validate reports every problem of c, each an *optionerr.Error naming
// the field. A zero field takes its default and is not a problem.
func (c AzureServiceBusConfig) Validate() error {
	var errs optionerr.List
	bad := errs.Add
	if c.UseAzureIdentity {
		for _, f := range [][2]string{{"FullyQualifiedNamespace", c.FullyQualifiedNamespace}, {"TenantID", c.TenantID}, {"ClientID", c.ClientID}, {"ClientSecret", c.ClientSecret}} {
			if f[1] == "" {
				bad(f[0], "required with use_azure_identity")
			}
		}
	} else if c.ConnectionString == "" {
		bad("ConnectionString", "required unless use_azure_identity")
	}
	if len(c.Queues) == 0 {
		bad("Queues", "at least one queue is required")
	}
	if c.MaxConcurrentCalls < 0 {
		bad("MaxConcurrentCalls", "%d: must be positive", c.MaxConcurrentCalls)
	}
	if c.MaxReceiveMessages < 0 {
		bad("MaxReceiveMessages", "%d: must be positive", c.MaxReceiveMessages)
	}
	return errors.Join(errs...)
}

// WithDefaults returns c with its zero fields set to their defaults.
func (c AzureServiceBusConfig) WithDefaults() AzureServiceBusConfig {
	if c.MaxConcurrentCalls == 0 {
		c.MaxConcurrentCalls = DefaultServiceBusMaxConcurrentCalls
	}
	if c.MaxReceiveMessages == 0 {
		c.MaxReceiveMessages = DefaultServiceBusMaxReceiveMessages
	}
	if c.MethodProperty == "" {
		c.MethodProperty = DefaultMethodHeader
	}
	return c
}

// AzureServiceBusSource reads Service Bus queues in peek-lock mode: a
// message is completed after it was applied, dead-lettered by Service
// Bus itself (the queue's $deadletterqueue, with the reason 'herald'
// and the error as its description) when moved aside, and abandoned
// when the consumer stops first, to be received again at once.
type AzureServiceBusSource struct {
	cfg AzureServiceBusConfig
}

// NewAzureServiceBusSource checks cfg and applies its defaults.
func NewAzureServiceBusSource(cfg AzureServiceBusConfig) (*AzureServiceBusSource, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &AzureServiceBusSource{cfg: cfg.WithDefaults()}, nil
}

// Close implements Source.
func (s *AzureServiceBusSource) Close() {}

func (s *AzureServiceBusSource) client() (*azservicebus.Client, error) {
	if !s.cfg.UseAzureIdentity {
		cl, err := azservicebus.NewClientFromConnectionString(s.cfg.ConnectionString, nil)
		if err != nil {
			return nil, fmt.Errorf("azure_service_bus: client: %w", err)
		}
		return cl, nil
	}
	cred, err := azidentity.NewClientSecretCredential(s.cfg.TenantID, s.cfg.ClientID, s.cfg.ClientSecret, nil)
	if err != nil {
		return nil, fmt.Errorf("azure_service_bus: credential: %w", err)
	}
	cl, err := azservicebus.NewClient(s.cfg.FullyQualifiedNamespace, cred, nil)
	if err != nil {
		return nil, fmt.Errorf("azure_service_bus: client: %w", err)
	}
	return cl, nil
}

// Run implements Source: max_concurrent_calls receivers per queue.
func (s *AzureServiceBusSource) Run(ctx context.Context, env *Env) error {
	cl, err := s.client()
	if err != nil {
		return err
	}
	defer func() {
		end, cancel := context.WithTimeout(context.WithoutCancel(ctx), serviceBusSettleTimeout)
		defer cancel()
		_ = cl.Close(end)
	}()
	var wg sync.WaitGroup
	for _, q := range s.cfg.Queues {
		for range s.cfg.MaxConcurrentCalls {
			wg.Go(func() {
				for ctx.Err() == nil {
					var err error
					if s.cfg.UseSessions {
						err = s.session(ctx, env, cl, q)
					} else {
						err = s.receive(ctx, env, cl, q)
					}
					if err != nil && ctx.Err() == nil {
						env.Down(err)
						_ = sleep(ctx, serviceBusRetryAfterFailure)
					}
				}
			})
		}
	}
	wg.Wait()
	return nil
}

// asbReceiver is what a Receiver and a SessionReceiver share.
type asbReceiver interface {
	ReceiveMessages(ctx context.Context, n int, o *azservicebus.ReceiveMessagesOptions) ([]*azservicebus.ReceivedMessage, error)
	CompleteMessage(ctx context.Context, m *azservicebus.ReceivedMessage, o *azservicebus.CompleteMessageOptions) error
	AbandonMessage(ctx context.Context, m *azservicebus.ReceivedMessage, o *azservicebus.AbandonMessageOptions) error
	DeadLetterMessage(ctx context.Context, m *azservicebus.ReceivedMessage, o *azservicebus.DeadLetterOptions) error
	Close(ctx context.Context) error
}

// receive reads a queue without sessions until ctx is done or a receive
// fails.
func (s *AzureServiceBusSource) receive(ctx context.Context, env *Env, cl *azservicebus.Client, queue string) error {
	r, err := cl.NewReceiverForQueue(queue, nil)
	if err != nil {
		return fmt.Errorf("azure_service_bus: receiver for %s: %w", queue, err)
	}
	defer s.close(ctx, r)
	// A receive of a quiet queue returns nothing until a message comes:
	// a peek tells at once that the queue is reachable.
	if _, err := r.PeekMessages(ctx, 1, nil); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("azure_service_bus: peek %s: %w", queue, err)
	}
	env.Up()
	for ctx.Err() == nil {
		msgs, err := r.ReceiveMessages(ctx, s.cfg.MaxReceiveMessages, nil)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("azure_service_bus: receive from %s: %w", queue, err)
		}
		env.Up()
		s.applyAll(ctx, env, r, queue, msgs)
	}
	return nil
}

// session takes the next session of a queue with messages and applies
// them in order until the session is quiet for serviceBusSessionIdle,
// renewing its lock meanwhile.
func (s *AzureServiceBusSource) session(ctx context.Context, env *Env, cl *azservicebus.Client, queue string) error {
	r, err := cl.AcceptNextSessionForQueue(ctx, queue, nil)
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		var sbErr *azservicebus.Error
		if errors.As(err, &sbErr) && sbErr.Code == azservicebus.CodeTimeout {
			// No session has messages: the queue is reachable and quiet.
			env.Up()
			return nil
		}
		return fmt.Errorf("azure_service_bus: accept a session of %s: %w", queue, err)
	}
	env.Up()
	defer s.close(ctx, r)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		// Renew the lock at two thirds of what is left of it, as
		// Centrifugo does; a failed renewal ends the session.
		for {
			wait := time.Until(r.LockedUntil()) * 2 / 3
			if wait <= 0 || sleep(sctx, wait) != nil {
				cancel()
				return
			}
			if err := r.RenewSessionLock(sctx, nil); err != nil {
				if sctx.Err() == nil {
					env.Log.Warn("consumer: session lock lost", "queue", queue, "session", r.SessionID(), "error", err)
				}
				cancel()
				return
			}
		}
	}()
	for sctx.Err() == nil {
		rctx, stop := context.WithTimeout(sctx, serviceBusSessionIdle)
		msgs, err := r.ReceiveMessages(rctx, s.cfg.MaxReceiveMessages, nil)
		stop()
		if sctx.Err() != nil || len(msgs) == 0 && rctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("azure_service_bus: receive from %s session %s: %w", queue, r.SessionID(), err)
		}
		s.applyAll(sctx, env, r, queue, msgs)
	}
	return nil
}

// applyAll applies messages in order and settles each.
func (s *AzureServiceBusSource) applyAll(ctx context.Context, env *Env, r asbReceiver, queue string, msgs []*azservicebus.ReceivedMessage) {
	for _, m := range msgs {
		method, data, err := serviceBusCommand(s.cfg, m)
		if err == nil {
			err = env.Apply(ctx, method, data)
		} else {
			err = env.Reject(err)
		}
		end, cancel := context.WithTimeout(context.WithoutCancel(ctx), serviceBusSettleTimeout)
		var dl *DeadLetter
		var serr error
		switch {
		case err == nil:
			serr = r.CompleteMessage(end, m, nil)
		case errors.As(err, &dl):
			reason, desc := serviceBusDeadLetterReason, dl.Err.Error()
			serr = r.DeadLetterMessage(end, m, &azservicebus.DeadLetterOptions{Reason: &reason, ErrorDescription: &desc})
		default:
			// Stopping: give the message back at once rather than when
			// its lock expires.
			serr = r.AbandonMessage(end, m, nil)
		}
		cancel()
		if serr != nil {
			// The lock expires and the message is received again.
			env.Log.Error("consumer: settling a message failed", "queue", queue, "message", m.MessageID, "error", serr)
		}
	}
}

func (s *AzureServiceBusSource) close(ctx context.Context, r asbReceiver) {
	end, cancel := context.WithTimeout(context.WithoutCancel(ctx), serviceBusSettleTimeout)
	defer cancel()
	_ = r.Close(end)
}

// serviceBusCommand decodes one message as Centrifugo does: the method
// in a string application property, or the body the envelope; or a
// publication in publication data mode. Properties that are not strings
// are not read, as in Centrifugo.
func serviceBusCommand(cfg AzureServiceBusConfig, m *azservicebus.ReceivedMessage) (method string, data []byte, err error) {
	props := make(map[string]string, len(m.ApplicationProperties))
	for k, v := range m.ApplicationProperties {
		if s, ok := v.(string); ok {
			props[k] = s
		}
	}
	return attributeCommand(props, cfg.MethodProperty, cfg.PublicationDataMode.mode(), m.Body)
}
