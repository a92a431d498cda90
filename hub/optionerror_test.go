package hub_test

import (
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/engine/memory"
	"github.com/heraldhq/herald/hub"
)

// TestValidateNamesGoFields: the hub reports every problem of a channel
// configuration, each naming the Go field it is about and no file
// format's key, so that a configuration layer can say which key it was.
func TestValidateNamesGoFields(t *testing.T) {
	t.Parallel()
	cfg := hub.ChannelConfig{
		WithoutNamespace: hub.NamespaceOptions{QueuePolicy: "drop_newest"},
		Namespaces: []hub.Namespace{
			{Name: "bad name!"},
			{Name: "hist", NamespaceOptions: hub.NamespaceOptions{HistorySize: 10, JoinLeaveMaxSubscribers: -2}},
			{Name: "fmt", NamespaceOptions: hub.NamespaceOptions{PublicationDataFormat: "xml", ChannelRegex: "("}},
			{Name: "hist"},
		},
	}
	err := cfg.Validate()
	got := map[string]string{}
	for _, oe := range hub.OptionErrors(err) {
		got[oe.Field] = oe.Message
	}
	for field, want := range map[string]string{
		"WithoutNamespace.QueuePolicy":          `"drop_newest": want close or drop_oldest`,
		"Namespaces[0].Name":                    `"bad name!": must match`,
		"Namespaces[1].HistorySize":             "HistorySize and HistoryTTL must be set together",
		"Namespaces[1].JoinLeaveMaxSubscribers": "-2: want -1 (no bound)",
		"Namespaces[2].PublicationDataFormat":   `"xml": want empty, json, json_object or binary`,
		"Namespaces[2].ChannelRegex":            "missing closing )",
		"Namespaces[3].Name":                    `"hist": defined twice`,
	} {
		if !strings.Contains(got[field], want) {
			t.Errorf("%s: got %q, want it to contain %q (all: %v)", field, got[field], want, err)
		}
	}
	for _, yamlKey := range []string{"queue_policy", "history_size", "channel_regex", "channel.namespaces"} {
		if strings.Contains(err.Error(), yamlKey) {
			t.Errorf("the hub's error speaks a file format's key %q: %v", yamlKey, err)
		}
	}
	_, err = hub.New(hub.Config{Engine: memory.New(memory.Config{}), Channels: hub.ChannelConfig{Namespaces: []hub.Namespace{{Name: "x"}}}})
	if oes := hub.OptionErrors(err); len(oes) != 1 || oes[0].Field != "Channels.Namespaces[0].Name" {
		t.Errorf("hub.New: want one problem with Channels.Namespaces[0].Name, got %v", err)
	}
}

// TestClientConfigValidate: out-of-range client options are refused by
// the hub itself, naming the Go field, in Validate and in New alike.
func TestClientConfigValidate(t *testing.T) {
	t.Parallel()
	bad := hub.ClientConfig{ChannelLimit: -1, WriteCoalesce: 2 * time.Second, CommandRateLimit: -3, PingInterval: 5 * time.Second, PongTimeout: 10 * time.Second}
	got := map[string]string{}
	for _, oe := range hub.OptionErrors(bad.Validate()) {
		got[oe.Field] = oe.Message
	}
	for field, want := range map[string]string{
		"ChannelLimit":     "-1: must not be negative",
		"WriteCoalesce":    "2s: want the longest coalescing interval, up to 1s",
		"CommandRateLimit": "-3: want commands per second",
		"PongTimeout":      "10s must be shorter than PingInterval (5s)",
	} {
		if !strings.Contains(got[field], want) {
			t.Errorf("%s: got %q, want it to contain %q", field, got[field], want)
		}
	}
	if err := (hub.ClientConfig{WriteCoalesce: 5 * time.Millisecond}).Validate(); err != nil {
		t.Errorf("a valid config: %v", err)
	}
	_, err := hub.New(hub.Config{Engine: memory.New(memory.Config{}), Client: hub.ClientConfig{QueueMaxSize: -1}})
	if oes := hub.OptionErrors(err); len(oes) != 1 || oes[0].Field != "Client.QueueMaxSize" {
		t.Errorf("hub.New: want one problem with Client.QueueMaxSize, got %v", err)
	}
}
