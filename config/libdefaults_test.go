package config

import (
	"reflect"
	"testing"

	"github.com/heraldhq/herald/consumer"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/proxy"
	"github.com/heraldhq/herald/transport/guard"
	"github.com/heraldhq/herald/transport/httpstream"
	"github.com/heraldhq/herald/transport/websocket"
)

// TestLibraryDefaultsAgreeWithTags: a library options type that the file
// decodes into states each default twice, as a default tag (what the file
// starts from, the docs and the example) and as the value its
// WithDefaults gives a zero field (what a program that builds the type in
// Go gets). Every tagged default must be the value WithDefaults applies,
// so that leaving a key out and writing its default mean the same.
func TestLibraryDefaultsAgreeWithTags(t *testing.T) {
	for _, c := range []struct {
		name string
		lib  any // the zero value with the library's defaults applied
	}{
		{"consumer.Retry", consumer.Retry{}.WithDefaults()},
		{"consumer.PostgresConfig", consumer.PostgresConfig{}.WithDefaults()},
		{"consumer.RedisStreamConfig", consumer.RedisStreamConfig{}.WithDefaults()},
		{"consumer.KafkaConfig", consumer.KafkaConfig{}.WithDefaults()},
		{"consumer.JetStreamConfig", consumer.JetStreamConfig{}.WithDefaults()},
		{"websocket.Config", websocket.Config{}.WithDefaults()},
		{"hub.SharedPollOptions", hub.SharedPollOptions{}.WithDefaults()},
		// guard.Config resolves its defaults into limits of its own; the
		// two that have a value are its constants.
		{"guard.Config", guard.Config{MaxUnauthenticated: guard.DefaultMaxUnauthenticated, Rate: guard.DefaultRate}},
		// The HTTP transports and the proxy apply theirs inside New.
		{"httpstream.StreamOptions", httpstream.StreamOptions{MaxRequestBodySize: httpstream.DefaultMaxRequestBodySize}},
		{"httpstream.EmulationOptions", httpstream.EmulationOptions{MaxRequestBodySize: httpstream.DefaultMaxEmulationBodySize}},
		{"proxy.Endpoint", proxy.Endpoint{Timeout: proxy.DefaultTimeout}},
	} {
		lib := reflect.ValueOf(c.lib)
		tagged := reflect.New(lib.Type()).Elem()
		applyDefaults(tagged)
		n := 0
		for _, o := range options(lib.Type()) {
			if !o.hasDefault || isSection(o.typ) {
				continue
			}
			n++
			got, want := tagged.FieldByIndex(o.index).Interface(), lib.FieldByIndex(o.index).Interface()
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s.%s: the tag's default is %v, WithDefaults applies %v", c.name, o.goName, got, want)
			}
		}
		if n == 0 {
			t.Errorf("%s: no option with a default tag: is it still tagged?", c.name)
		}
	}
	if got := Default().ProxyMaxInFlight; got != proxy.DefaultMaxInFlight {
		t.Errorf("proxy_max_in_flight: the tag's default is %d, proxy.New applies %d", got, proxy.DefaultMaxInFlight)
	}
}
