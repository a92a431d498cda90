package stateoutput

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/heraldhq/herald/internal/optionerr"
)

// NATSConfig is the nats section: a subject that gets one message per
// event.
type NATSConfig struct {
	URL     string `yaml:"url" default:"nats://127.0.0.1:4222" doc:"the NATS server (credentials in the URL: 'nats://user:pass@host:4222')"`
	Subject string `yaml:"subject" default:"herald.channel_state" doc:"the subject each event is published to, as JSON '{\"channel\", \"type\", \"time_ms\"}' with the header 'Nats-Msg-Id' = 'channel:type:time_ms'"`
	// JetStream waits for the stream's acknowledgement of each event, so
	// a batch counts as delivered only once stored.
	JetStream bool `yaml:"jetstream" doc:"publish through JetStream: each event waits for the acknowledgement of the stream that captures 'subject' (which must exist), and a repeat within the stream's duplicate window is dropped by 'Nats-Msg-Id'. Without it the events go to core NATS: delivered to whoever listens then, or lost"`
}

// Defaults of NATSConfig.
const (
	DefaultNATSURL     = "nats://127.0.0.1:4222"
	DefaultNATSSubject = "herald.channel_state"
	// natsFlushTimeout bounds a flush when the caller set no deadline.
	natsFlushTimeout = 10 * time.Second
)

// Validate reports every problem of c, each an *optionerr.Error.
func (c NATSConfig) Validate() error {
	var errs optionerr.List
	if c.URL == "" {
		errs.Add("URL", "required, e.g. %s", DefaultNATSURL)
	}
	if s := c.Subject; s != "" && (strings.ContainsAny(s, " \t\r\n*>") || strings.HasPrefix(s, ".") || strings.HasSuffix(s, ".") || strings.Contains(s, "..")) {
		errs.Add("Subject", "%q: want a subject without wildcards or spaces, tokens separated by '.'", s)
	}
	return errs.Err()
}

// subject is c.Subject or its default.
func (c NATSConfig) subject() string {
	if c.Subject == "" {
		return DefaultNATSSubject
	}
	return c.Subject
}

// NATSOutput publishes each event as a message to a subject, with the
// header Nats-Msg-Id naming the event, so that a JetStream stream on the
// subject drops a repeat (a batch delivered again) within its duplicate
// window. With JetStream each message waits for the stream's
// acknowledgement, one after the other, so the stream holds a batch in
// its order; without, the batch is flushed to the server before Write
// returns.
type NATSOutput struct {
	nc      *nats.Conn
	js      jetstream.JetStream // nil: core NATS
	subject string
}

func newNATS(c NATSConfig) (*NATSOutput, error) {
	// Reconnects for ever: a server away fails the batches meanwhile,
	// which the hub retries.
	nc, err := nats.Connect(c.URL, nats.Name("herald channel state output"), nats.MaxReconnects(-1), nats.RetryOnFailedConnect(true))
	if err != nil {
		return nil, fmt.Errorf("nats: connect to %s: %w", c.URL, err)
	}
	o := &NATSOutput{nc: nc, subject: c.subject()}
	if c.JetStream {
		if o.js, err = jetstream.New(nc); err != nil {
			nc.Close()
			return nil, fmt.Errorf("nats: jetstream: %w", err)
		}
	}
	return o, nil
}

// NewNATSOutput connects to c.URL (in the background: a server away
// fails the writes until it is back).
func NewNATSOutput(ctx context.Context, c NATSConfig) (*NATSOutput, error) {
	return openAs[*NATSOutput](ctx, Config{Name: TypeNATS, Type: TypeNATS, NATS: c})
}

// Write implements Output.
func (o *NATSOutput) Write(ctx context.Context, evs []Event) error {
	for _, e := range evs {
		data, err := marshalEvent(e)
		if err != nil {
			return err
		}
		m := nats.NewMsg(o.subject)
		m.Data = data
		m.Header.Set(jetstream.MsgIDHeader, eventID(e))
		if o.js != nil {
			if _, err := o.js.PublishMsg(ctx, m); err != nil {
				return fmt.Errorf("nats: publish to %s through JetStream: %w", o.subject, err)
			}
			continue
		}
		if err := o.nc.PublishMsg(m); err != nil {
			return fmt.Errorf("nats: publish to %s: %w", o.subject, err)
		}
	}
	if o.js == nil {
		// FlushWithContext wants a deadline; the hub's context has one.
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, natsFlushTimeout)
			defer cancel()
		}
		if err := o.nc.FlushWithContext(ctx); err != nil {
			return fmt.Errorf("nats: flush to %s: %w", o.subject, err)
		}
	}
	return nil
}

// Close implements Output.
func (o *NATSOutput) Close() { o.nc.Close() }
