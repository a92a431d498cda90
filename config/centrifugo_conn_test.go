package config

import (
	"reflect"
	"testing"

	"github.com/heraldhq/herald/hub"
)

// TestCentrifugoConnectionOptions: Centrifugo's per-connection options and
// its global publication_data_format come through the import as they are
// (the latter as the default of every namespace that sets none).
func TestCentrifugoConnectionOptions(t *testing.T) {
	file := `{
  "client": {"concurrency": 8, "connect_include_server_time": true,
             "subscribe_to_user_personal_channel": {"enabled": true, "personal_channel_namespace": "personal", "single_connection": true}},
  "channel": {"publication_data_format": "binary",
              "namespaces": [{"name": "personal", "presence": true}, {"name": "js", "publication_data_format": "json"}]},
  "rpc": {"namespace_boundary": ".", "ping": {"enabled": true, "method": "health"}}
}`
	cfg, err := ParseCentrifugo([]byte(file), "config.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string][2]any{
		"concurrency":            {cfg.Client.Concurrency, 8},
		"server time":            {cfg.Client.ConnectIncludeServerTime, true},
		"personal channel":       {cfg.Client.SubscribeToUserPersonalChannel, hub.PersonalChannelOptions{Enabled: true, Namespace: "personal", SingleConnection: true}},
		"format (none)":          {cfg.Channel.WithoutNamespace.PublicationDataFormat, hub.DataFormatBinary},
		"format (personal)":      {cfg.Channel.Namespaces[0].PublicationDataFormat, hub.DataFormatBinary},
		"format (own)":           {cfg.Channel.Namespaces[1].PublicationDataFormat, hub.DataFormatJSON},
		"rpc namespace boundary": {cfg.RPC.NamespaceBoundary, "."},
		"rpc ping":               {cfg.RPC.RPCPingMethod(), "health"},
	} {
		if !reflect.DeepEqual(c[0], c[1]) {
			t.Errorf("%s: got %v, want %v", name, c[0], c[1])
		}
	}
}
