package consumer

import (
	"errors"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/heraldhq/herald/internal/optionerr"
)

// TestAttributeCommand: what a cloud queue's message applies, in command
// mode and in publication data mode, as Centrifugo v6.9.1 reads it.
func TestAttributeCommand(t *testing.T) {
	mode := AttributeDataMode{Enabled: true}.mode()
	for _, tc := range []struct {
		name         string
		attrs        map[string]string
		mode         PublicationDataMode
		body         string
		method, data string
		malformed    bool
	}{
		{name: "method attribute", attrs: map[string]string{"centrifugo-method": "publish"}, body: `{"channel":"a","data":1}`, method: "publish", data: `{"channel":"a","data":1}`},
		{name: "envelope: no method", attrs: map[string]string{"other": "x"}, body: `{"method":"publish"}`, data: `{"method":"publish"}`},
		{name: "one channel", mode: mode, attrs: map[string]string{"centrifugo-channels": "a"}, body: `{"n":1}`, method: "publish", data: `{"channel":"a","data":{"n":1}}`},
		{name: "channels and options", mode: mode, attrs: map[string]string{
			"centrifugo-channels": "a, b", "centrifugo-idempotency-key": "k", "centrifugo-delta": "true",
			"centrifugo-version": "7", "centrifugo-version-epoch": "e", "centrifugo-tag-kind": "x",
		}, body: `"s"`, method: "broadcast", data: `{"channels":["a","b"],"data":"s","idempotency_key":"k","delta":true,"tags":{"kind":"x"},"version":7,"version_epoch":"e"}`},
		{name: "no channel", mode: mode, attrs: map[string]string{}, body: `{}`, malformed: true},
		{name: "data not JSON", mode: mode, attrs: map[string]string{"centrifugo-channels": "a"}, body: `text`, malformed: true},
		{name: "bad delta", mode: mode, attrs: map[string]string{"centrifugo-channels": "a", "centrifugo-delta": "maybe"}, body: `1`, malformed: true},
		{name: "bad version", mode: mode, attrs: map[string]string{"centrifugo-channels": "a", "centrifugo-version": "-1"}, body: `1`, malformed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method, data, err := attributeCommand(tc.attrs, DefaultMethodHeader, tc.mode, []byte(tc.body))
			if tc.malformed {
				if !errors.Is(err, ErrMalformed) {
					t.Fatalf("err %v, want ErrMalformed", err)
				}
				return
			}
			if err != nil || method != tc.method || string(data) != tc.data {
				t.Fatalf("got %q %s %v, want %q %s", method, data, err, tc.method, tc.data)
			}
		})
	}
}

// TestSqsCommand: SQS's string attributes, and the SNS envelope.
func TestSqsCommand(t *testing.T) {
	cfg := AwsSqsConfig{Queues: []string{"q"}}.WithDefaults()
	m := types.Message{Body: aws.String(`{"channel":"a","data":1}`), MessageAttributes: map[string]types.MessageAttributeValue{
		"centrifugo-method": {DataType: aws.String("String"), StringValue: aws.String("publish")},
	}}
	if method, data, err := sqsCommand(cfg, m); err != nil || method != "publish" || string(data) != *m.Body {
		t.Fatalf("got %q %s %v", method, data, err)
	}
	cfg.SNSEnvelope = true
	m.Body = aws.String(`{"Type":"Notification","Message":"{\"channel\":\"a\",\"data\":2}"}`)
	if method, data, err := sqsCommand(cfg, m); err != nil || method != "publish" || string(data) != `{"channel":"a","data":2}` {
		t.Fatalf("SNS: got %q %s %v", method, data, err)
	}
	m.Body = aws.String(`{"channel":"a"}`)
	if _, _, err := sqsCommand(cfg, m); !errors.Is(err, ErrMalformed) {
		t.Fatalf("SNS without Message: %v, want ErrMalformed", err)
	}
}

// TestServiceBusCommand: application properties that are strings, and
// publication data mode with its property keys; no Service Bus server
// runs here (its emulator is a container image), so this is what is
// tested of the decoding.
func TestServiceBusCommand(t *testing.T) {
	cfg := AzureServiceBusConfig{ConnectionString: "x", Queues: []string{"q"}}.WithDefaults()
	m := &azservicebus.ReceivedMessage{Body: []byte(`{"channel":"a","data":1}`), ApplicationProperties: map[string]any{"centrifugo-method": "publish"}}
	if method, data, err := serviceBusCommand(cfg, m); err != nil || method != "publish" || string(data) != string(m.Body) {
		t.Fatalf("got %q %s %v", method, data, err)
	}
	m.ApplicationProperties = map[string]any{"centrifugo-method": 5}
	if method, _, err := serviceBusCommand(cfg, m); err != nil || method != "" {
		t.Fatalf("a property that is not a string is not the method: %q %v", method, err)
	}
	cfg.PublicationDataMode = PropertyDataMode{Enabled: true, ChannelsProperty: "to"}
	m = &azservicebus.ReceivedMessage{Body: []byte(`{"n":1}`), ApplicationProperties: map[string]any{"to": "a,b", "centrifugo-version": "3"}}
	if method, data, err := serviceBusCommand(cfg, m); err != nil || method != "broadcast" || string(data) != `{"channels":["a","b"],"data":{"n":1},"version":3}` {
		t.Fatalf("publication data mode: got %q %s %v", method, data, err)
	}
}

// TestCloudConfigValidate: each kind's required keys, by field name.
func TestCloudConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want []string
	}{
		{Config{Name: "a", Type: TypeAwsSqs, AwsSqs: AwsSqsConfig{MaxNumberOfMessages: 11, PollWaitTime: -1}}, []string{"AwsSqs.Queues", "AwsSqs.MaxNumberOfMessages", "AwsSqs.PollWaitTime"}},
		{Config{Name: "a", Type: TypeGooglePubSub, GooglePubSub: GooglePubSubConfig{AuthMechanism: "service_account"}}, []string{"GooglePubSub.ProjectID", "GooglePubSub.Subscriptions", "GooglePubSub.CredentialsFile"}},
		{Config{Name: "a", Type: TypeAzureServiceBus, AzureServiceBus: AzureServiceBusConfig{UseAzureIdentity: true, TenantID: "t"}}, []string{"AzureServiceBus.FullyQualifiedNamespace", "AzureServiceBus.ClientID", "AzureServiceBus.ClientSecret", "AzureServiceBus.Queues"}},
		{Config{Name: "a", Type: TypeAzureServiceBus}, []string{"AzureServiceBus.ConnectionString", "AzureServiceBus.Queues"}},
		{Config{Name: "a", Type: "rabbitmq"}, []string{"Type"}},
	} {
		var got []string
		for _, e := range optionerr.All(tc.cfg.Validate()) {
			got = append(got, e.Field)
		}
		if len(got) != len(tc.want) {
			t.Fatalf("%s: problems %v, want %v", tc.cfg.Type, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Fatalf("%s: problems %v, want %v", tc.cfg.Type, got, tc.want)
			}
		}
	}
}
