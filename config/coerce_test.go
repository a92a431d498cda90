package config

import (
	"strings"
	"testing"
)

// TestConfigValuesNotCoerced: issue 35 #8. No value is changed on the way
// without a word: a key given twice, a fraction where a whole number is
// wanted, a long numeric key, a string where a number is wanted (taken
// as Centrifugo's weak decoding takes it), a duration without a unit.
// (A variable two namespaces' names share, chat-room and chat_room,
// applies to both, as in Centrifugo: TestCentrifugoEnvNameCollision.)
func TestConfigValuesNotCoerced(t *testing.T) {
	refused := map[string]struct{ file, name, want string }{
		"json duplicate":      {`{"client": {"channel_limit": 1, "channel_limit": 2}}`, "c.json", "client.channel_limit: given twice"},
		"json duplicate item": {`{"channel": {"namespaces": [{"name": "a", "presence": true, "presence": false}]}}`, "c.json", "channel.namespaces[0].presence: given twice"},
		"yaml duplicate":      {"client:\n  channel_limit: 1\n  channel_limit: 2\n", "c.yaml", `mapping key "channel_limit" already defined`},
		"fraction":            {`{"client": {"channel_limit": 1.9}}`, "c.json", "client.channel_limit"},
		"string duration":     {`{"client": {"ping_interval": "25"}}`, "c.json", `"25": write the duration with a unit`},
	}
	for name, c := range refused {
		if _, err := ParseCentrifugo([]byte(c.file), c.name, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	// Herald's own files too.
	for name, c := range map[string]struct{ file, want string }{
		"duplicate": {"client:\n  channel_limit: 1\n  channel_limit: 2\n", "client.channel_limit: given twice"},
		"fraction":  {"client:\n  channel_limit: 1.9\n", "client.channel_limit: want a whole number"},
	} {
		if _, err := Parse([]byte(c.file)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("herald %s: %v, want %q", name, err, c.want)
		}
	}
	// A numeric key is kept digit for digit.
	for name, file := range map[string]string{
		"c.json": `{"http_api": {"key": 12345678901234567890123456789012}}`,
		"c.yaml": "http_api:\n  key: 12345678901234567890123456789012\n",
	} {
		cfg, err := ParseCentrifugo([]byte(file), name, nil)
		if err != nil || cfg.HTTPAPI.Key != "12345678901234567890123456789012" {
			t.Errorf("%s: numeric http_api.key: %q, %v", name, cfg.HTTPAPI.Key, err)
		}
	}
	// A YAML merge key still merges.
	cfg, err := ParseCentrifugo([]byte("base: &b\n  channel_limit: 7\nclient:\n  <<: *b\n"), "c.yaml", nil)
	if err != nil || cfg.Client.ChannelLimit != 7 {
		t.Errorf("merge key: %d, %v", cfg.Client.ChannelLimit, err)
	}
	// "25" where a number is wanted: 25, as Centrifugo's weak decoding
	// (viper, mapstructure WeaklyTypedInput) reads it.
	cfg, err = ParseCentrifugo([]byte(`{"client": {"channel_limit": "25"}}`), "c.json", nil)
	if err != nil || cfg.Client.ChannelLimit != 25 {
		t.Errorf(`channel_limit "25": %d, %v`, cfg.Client.ChannelLimit, err)
	}
	if _, err := ParseCentrifugo([]byte(`{"client": {"channel_limit": "many"}}`), "c.json", nil); err == nil {
		t.Error(`channel_limit "many" is taken`)
	}
}
