package consumer_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"

	"github.com/heraldhq/herald/consumer"
)

const pubSubProject = "herald-test"

// pubSubServer is a Pub/Sub server on loopback: pstest, the fake server
// of Google's Go client, reached through PUBSUB_EMULATOR_HOST as the
// consumer would reach Google's emulator. Google's own emulator is a
// gcloud component that no package registry serves.
type pubSubServer struct {
	client *pubsub.Client
}

func startPubSub(t *testing.T) *pubSubServer {
	t.Helper()
	srv := pstest.NewServer()
	t.Cleanup(func() { _ = srv.Close() })
	t.Setenv("PUBSUB_EMULATOR_HOST", srv.Addr)
	cl, err := pubsub.NewClient(context.Background(), pubSubProject)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	return &pubSubServer{client: cl}
}

// topic creates a topic and a subscription of it, sub; policy, when not
// "", is the subscription's dead-letter topic.
func (p *pubSubServer) topic(t *testing.T, topic, sub, policy string) {
	t.Helper()
	ctx := context.Background()
	name := "projects/" + pubSubProject + "/topics/" + topic
	if _, err := p.client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: name}); err != nil {
		t.Fatal(err)
	}
	s := &pubsubpb.Subscription{Name: "projects/" + pubSubProject + "/subscriptions/" + sub, Topic: name, AckDeadlineSeconds: 10}
	if policy != "" {
		s.DeadLetterPolicy = &pubsubpb.DeadLetterPolicy{DeadLetterTopic: "projects/" + pubSubProject + "/topics/" + policy, MaxDeliveryAttempts: 5}
	}
	if _, err := p.client.SubscriptionAdminClient.CreateSubscription(ctx, s); err != nil {
		t.Fatal(err)
	}
}

func (p *pubSubServer) publish(t *testing.T, topic, data string, attrs map[string]string) {
	t.Helper()
	pub := p.client.Publisher(topic)
	defer pub.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := pub.Publish(ctx, &pubsub.Message{Data: []byte(data), Attributes: attrs}).Get(ctx); err != nil {
		t.Fatal(err)
	}
}

// receive returns the first n messages of sub, acknowledged.
func (p *pubSubServer) receive(t *testing.T, sub string, n int) []*pubsub.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var (
		mu  sync.Mutex
		got []*pubsub.Message
	)
	err := p.client.Subscriber(sub).Receive(ctx, func(_ context.Context, m *pubsub.Message) {
		m.Ack()
		mu.Lock()
		defer mu.Unlock()
		if got = append(got, m); len(got) == n {
			cancel()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d messages from %s, want %d", len(got), sub, n)
	}
	return got
}

func pubSubConfig(name, sub string) consumer.Config {
	return consumer.Config{Name: name, Type: consumer.TypeGooglePubSub,
		Retry:        consumer.Retry{MaxRetries: 2, MinBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond},
		GooglePubSub: consumer.GooglePubSubConfig{ProjectID: pubSubProject, Subscriptions: []string{sub}}}
}

// TestGooglePubSub runs the Pub/Sub consumer against one server.
func TestGooglePubSub(t *testing.T) {
	p := startPubSub(t)
	n := startNode(t)

	// Commands in both forms and a publication in publication data mode
	// reach a subscriber; a malformed message and one over
	// max_message_size are published to dead_letter_topic, named by their
	// error.
	t.Run("DeliversAndMovesAside", func(t *testing.T) {
		p.topic(t, "commands", "commands-sub", "")
		p.topic(t, "commands_dead", "dead-sub", "")
		sub := subscribe(t, n.hub, "news")
		cfg := pubSubConfig("pubsub", "commands-sub")
		cfg.MaxMessageSize = 200
		cfg.GooglePubSub.DeadLetterTopic = "commands_dead"
		g := runGroup(t, cfg, n.exec, "n1")
		p.publish(t, "commands", publishCmd("news", 1, ""), map[string]string{"centrifugo-method": "publish"})
		sub.waitFor(t, 1, 20*time.Second)
		p.publish(t, "commands", "not json", nil)
		p.publish(t, "commands", publishCmd("news", 99, strings.Repeat("k", 200)), map[string]string{"centrifugo-method": "publish"})
		p.publish(t, "commands", `{"method":"publish","payload":`+publishCmd("news", 2, "")+`}`, nil)
		sub.waitFor(t, 2, 20*time.Second)
		errs := map[bool]bool{}
		for _, m := range p.receive(t, "dead-sub", 2) {
			if m.Attributes["herald-error"] == "" || !strings.HasPrefix(m.Attributes["herald-source"], "commands-sub/") {
				t.Fatalf("dead letter without herald-error and herald-source: %v", m.Attributes)
			}
			errs[strings.Contains(m.Attributes["herald-error"], "max_message_size")] = true
		}
		if !errs[true] || !errs[false] {
			t.Fatalf("want one dead letter over max_message_size and one malformed, got %v", errs)
		}
		if got := counter(t, g, "herald_consumer_oversized_total", "pubsub"); got != 1 {
			t.Fatalf("oversized %v, want 1", got)
		}
		equal(t, sub.settle(t, 2, 0), nums(2))
	})

	t.Run("PublicationDataMode", func(t *testing.T) {
		p.topic(t, "data", "data-sub", "")
		news, feed := subscribe(t, n.hub, "pd-news"), subscribe(t, n.hub, "pd-feed")
		cfg := pubSubConfig("pubsub-data", "data-sub")
		cfg.GooglePubSub.PublicationDataMode.Enabled = true
		runGroup(t, cfg, n.exec, "n1")
		p.publish(t, "data", `{"n":1}`, map[string]string{"centrifugo-channels": "pd-news"})
		p.publish(t, "data", `{"n":2}`, map[string]string{"centrifugo-channels": "pd-news,pd-feed", "centrifugo-tag-kind": "x"})
		equal(t, news.waitFor(t, 2, 20*time.Second), nums(2))
		equal(t, feed.waitFor(t, 1, 20*time.Second), []string{`{"n":2}`})
	})

	// Without dead_letter_topic a failed message is nacked, and the
	// subscription's dead-letter policy moves it, as with Centrifugo.
	t.Run("DeadLetterPolicy", func(t *testing.T) {
		p.topic(t, "policy_dead", "policy-dead-sub", "")
		p.topic(t, "policy", "policy-sub", "policy_dead")
		runGroup(t, pubSubConfig("pubsub-policy", "policy-sub"), n.exec, "n1")
		p.publish(t, "policy", "not json", nil)
		if got := string(p.receive(t, "policy-dead-sub", 1)[0].Data); got != "not json" {
			t.Fatalf("dead letter %q", got)
		}
	})
}
