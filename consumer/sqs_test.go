package consumer_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/heraldhq/herald/consumer"
	"github.com/heraldhq/herald/internal/test/testenv"
)

// elasticMQ is an ElasticMQ server (an SQS-compatible queue server) of
// the test's own, run with java from the jars in
// HERALD_TEST_ELASTICMQ_LIBS (scripts/test.sh fetches
// org.elasticmq:elasticmq-server_2.13 and its dependencies from Maven
// Central).
type elasticMQ struct {
	endpoint string
	client   *sqs.Client
}

func startElasticMQ(t *testing.T) *elasticMQ {
	t.Helper()
	libs := testenv.Require(t, "HERALD_TEST_ELASTICMQ_LIBS")
	port := testenv.FreePort(t)
	conf := filepath.Join(t.TempDir(), "elasticmq.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, `include classpath("application.conf")
node-address { protocol = http, host = 127.0.0.1, port = %[1]d, context-path = "" }
rest-sqs { enabled = true, bind-port = %[1]d, bind-hostname = "127.0.0.1", sqs-limits = strict }
rest-stats { enabled = false }
`, port), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testenv.Binary(t, "java"), "-Xmx256m", "-XX:+UseSerialGC", "-Dconfig.file="+conf, "-cp", filepath.Join(libs, "*"), "org.elasticmq.server.Main")
	testenv.StartProcess(t, cmd).WaitListening(t, port, 2*time.Minute)
	m := &elasticMQ{endpoint: "http://127.0.0.1:" + strconv.Itoa(port)}
	m.client = sqs.New(sqs.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(m.endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("herald", "herald", ""),
	})
	// The consumer takes its credentials as Centrifugo's does, from the
	// SDK's default chain: the environment here, nothing from the host.
	t.Setenv("AWS_ACCESS_KEY_ID", "herald")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "herald")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	return m
}

func (m *elasticMQ) createQueue(t *testing.T, name string, attrs map[string]string) string {
	t.Helper()
	out, err := m.client.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		t.Fatalf("create queue %s: %v", name, err)
	}
	return aws.ToString(out.QueueUrl)
}

// send sends one message: the method in the centrifugo-method attribute,
// or the envelope when method is ""; group, when not "", is the FIFO
// message group.
func (m *elasticMQ) send(t *testing.T, queue, method, body, group string) {
	t.Helper()
	in := &sqs.SendMessageInput{QueueUrl: aws.String(queue), MessageBody: aws.String(body)}
	if method != "" {
		in.MessageAttributes = map[string]types.MessageAttributeValue{"centrifugo-method": {DataType: aws.String("String"), StringValue: aws.String(method)}}
	}
	if group != "" {
		in.MessageGroupId = aws.String(group)
	}
	if _, err := m.client.SendMessage(context.Background(), in); err != nil {
		t.Fatalf("send: %v", err)
	}
}

// receiveAll receives n messages from queue within 20s.
func (m *elasticMQ) receiveAll(t *testing.T, queue string, n int) []types.Message {
	t.Helper()
	var got []types.Message
	deadline := time.Now().Add(20 * time.Second)
	for len(got) < n && time.Now().Before(deadline) {
		out, err := m.client.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(queue), MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 60,
			MessageAttributeNames: []string{"All"},
		})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, out.Messages...)
	}
	if len(got) != n {
		t.Fatalf("%d messages in %s, want %d", len(got), queue, n)
	}
	return got
}

func (m *elasticMQ) config(name string, queue string) consumer.Config {
	return consumer.Config{Name: name, Type: consumer.TypeAwsSqs,
		Retry: consumer.Retry{MaxRetries: 2, MinBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond},
		AwsSqs: consumer.AwsSqsConfig{Queues: []string{queue}, Region: "us-east-1", LocalStackEndpoint: m.endpoint,
			PollWaitTime: time.Second, VisibilityTimeout: 2 * time.Second}}
}

// TestAwsSqs runs the SQS consumer against one ElasticMQ server.
func TestAwsSqs(t *testing.T) {
	m := startElasticMQ(t)
	n := startNode(t)

	// Commands in both forms reach a subscriber; a malformed one and one
	// over max_message_size are moved to dead_letter_queue, named by their
	// error, and deleted; the queue goes on.
	t.Run("DeliversAndMovesAside", func(t *testing.T) {
		queue := m.createQueue(t, "commands", nil)
		dead := m.createQueue(t, "commands_dead", nil)
		sub := subscribe(t, n.hub, "news")
		cfg := m.config("sqs", queue)
		cfg.MaxMessageSize = 200
		cfg.AwsSqs.DeadLetterQueue = dead
		g := runGroup(t, cfg, n.exec, "n1")
		m.send(t, queue, "publish", publishCmd("news", 1, ""), "")
		sub.waitFor(t, 1, 20*time.Second)
		m.send(t, queue, "", `not json`, "")
		m.send(t, queue, "publish", publishCmd("news", 99, strings.Repeat("k", 200)), "")
		m.send(t, queue, "", `{"method":"publish","payload":`+publishCmd("news", 2, "")+`}`, "")
		equal(t, sub.waitFor(t, 2, 20*time.Second), nums(2))
		errs := map[bool]bool{}
		for _, d := range m.receiveAll(t, dead, 2) {
			e := d.MessageAttributes["herald-error"].StringValue
			if e == nil || aws.ToString(d.MessageAttributes["herald-source"].StringValue) != queue {
				t.Fatalf("dead letter without herald-error and herald-source: %v", d.MessageAttributes)
			}
			errs[strings.Contains(*e, "max_message_size")] = true
		}
		if !errs[true] || !errs[false] {
			t.Fatalf("want one dead letter over max_message_size and one malformed, got %v", errs)
		}
		if got := counter(t, g, "herald_consumer_oversized_total", "sqs"); got != 1 {
			t.Fatalf("oversized %v, want 1", got)
		}
		eventually(t, 20*time.Second, "the queue is empty", func() bool {
			out, err := m.client.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(queue),
				AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
			return err == nil && out.Attributes["ApproximateNumberOfMessages"] == "0" && out.Attributes["ApproximateNumberOfMessagesNotVisible"] == "0"
		})
	})

	// Without dead_letter_queue a failed message is left to the queue's
	// redrive policy, as with Centrifugo.
	t.Run("RedrivePolicy", func(t *testing.T) {
		dead := m.createQueue(t, "redriven_dead", nil)
		arn, err := m.client.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(dead),
			AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
		if err != nil {
			t.Fatal(err)
		}
		queue := m.createQueue(t, "redriven", map[string]string{
			"RedrivePolicy": fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":"1"}`, arn.Attributes["QueueArn"]),
		})
		cfg := m.config("sqs-redrive", queue)
		cfg.AwsSqs.VisibilityTimeout = time.Second
		runGroup(t, cfg, n.exec, "n1")
		m.send(t, queue, "", `not json`, "")
		if body := aws.ToString(m.receiveAll(t, dead, 1)[0].Body); body != "not json" {
			t.Fatalf("dead letter %q", body)
		}
	})

	// A FIFO group's messages are applied in order, with max_concurrency
	// above one.
	t.Run("FifoOrder", func(t *testing.T) {
		queue := m.createQueue(t, "ordered.fifo", map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"})
		sub := subscribe(t, n.hub, "fifo")
		cfg := m.config("sqs-fifo", queue)
		cfg.AwsSqs.MaxConcurrency = 4
		runGroup(t, cfg, n.exec, "n1")
		const each = 30
		for i := 1; i <= each; i++ {
			m.send(t, queue, "publish", publishCmd("fifo", i, ""), "g")
		}
		equal(t, sub.waitFor(t, each, 30*time.Second), nums(each))
	})
}
