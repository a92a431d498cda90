package config

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/hub"
)

// TestEveryOptionIsDefined: every key has its one line of documentation
// (the tables and the example show it), and every default decodes.
func TestEveryOptionIsDefined(t *testing.T) {
	var walk func(t reflect.Type, prefix string) int
	n := 0
	walk = func(typ reflect.Type, prefix string) int {
		seen := map[string]bool{}
		for _, o := range options(typ) {
			key := join(prefix, o.key)
			if seen[o.key] {
				t.Errorf("%s is defined twice (an inline type's key not shadowed?)", key)
			}
			seen[o.key] = true
			et := o.typ
			if et.Kind() == reflect.Slice && isSection(et.Elem()) {
				et = et.Elem()
			}
			if isSection(et) {
				walk(et, key)
				continue
			}
			n++
			if strings.TrimSpace(o.doc) == "" {
				t.Errorf("%s has no doc tag", key)
			}
			if strings.Contains(o.doc, "`") || strings.Contains(o.doc, "\n") {
				t.Errorf("%s: a doc tag is one line, with 'code' in single quotes", key)
			}
		}
		return n
	}
	if walk(reflect.TypeOf(Config{}), "") < 100 {
		t.Errorf("found %d keys: has the walk lost some?", n)
	}
	_ = Default() // panics on a default that does not decode
}

// TestDefaultsAgreeWithTheCode: the defaults the file starts from are the
// ones the code applies for zero, so leaving a key out and writing its
// default mean the same.
func TestDefaultsAgreeWithTheCode(t *testing.T) {
	d := Default()
	for _, c := range []struct {
		key       string
		got, want any
	}{
		{"client.token.cache_size", d.Client.Token.CacheSize, DefaultTokenCacheSize},
		{"http.idle_timeout", d.HTTP.IdleTimeout, DefaultIdleTimeout},
		{"http_api.body_read_timeout", d.HTTPAPI.BodyReadTimeout, api.DefaultBodyReadTimeout},
		{"http_api.max_batch_commands", d.HTTPAPI.MaxBatchCommands, api.DefaultMaxBatchCommands},
		{"http_api.max_batch_response_size", d.HTTPAPI.MaxBatchResponseSize, int64(api.DefaultMaxBatchResponseSize)},
		{"http_api.max_body_size", d.HTTPAPI.MaxBodySize, int64(api.DefaultMaxBodySize)},
		{"http_api.idempotency_window", d.HTTPAPI.IdempotencyWindow, hub.DefaultIdempotencyWindow},
		{"channel.without_namespace.queue_policy", d.Channel.WithoutNamespace.QueuePolicy, hub.QueueClose},
		{"channel.without_namespace.publication_data_format", d.Channel.WithoutNamespace.PublicationDataFormat, hub.DataFormatAny},
		{"shutdown.drain_window", d.Shutdown.DrainWindow, 5 * time.Second},
		{"admin.ui.path", d.Admin.UI.Path, DefaultAdminUIPath},
	} {
		if c.got != c.want {
			t.Errorf("%s: default %v, the code's %v", c.key, c.got, c.want)
		}
	}
}

// TestGoPathToKey translates the hub's Go field paths, through inline
// (embedded) types, to keys.
func TestGoPathToKey(t *testing.T) {
	ct := reflect.TypeOf(ChannelConfig{})
	for goPath, want := range map[string]string{
		"Namespaces[2].HistorySize":          "namespaces[2].history_size",
		"WithoutNamespace.QueuePolicy":       "without_namespace.queue_policy",
		"Namespaces[0].AllowedDeltaTypes[1]": "namespaces[0].allowed_delta_types[1]",
		"Namespaces[0].Name":                 "namespaces[0].name",
		"Namespaces[0].NoSuchField":          "namespaces[0].NoSuchField",
	} {
		if got := goPathToKey(ct, goPath); got != want {
			t.Errorf("%s: got %s, want %s", goPath, got, want)
		}
	}
	msg := goNamesToKeys(reflect.TypeOf(Namespace{}), "HistorySize and HistoryTTL must be set together; HistoryX stays")
	if msg != "history_size and history_ttl must be set together; HistoryX stays" {
		t.Errorf("goNamesToKeys: %q", msg)
	}
}
