package config

import (
	"reflect"
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
)

// TestHubConfigConvertsEveryOption fails when a hub option has no key in
// the file format or is not carried over by hubConfig: every field of the
// file structs is set, and every field of the hub options must come out
// set.
func TestHubConfigConvertsEveryOption(t *testing.T) {
	var cfg Config
	fillFields(t, reflect.ValueOf(&cfg.Client.ClientConfig).Elem())
	// The file's rate_limit replaces the hub's (ratelimitredis.go).
	fillFields(t, reflect.ValueOf(&cfg.Client.RateLimit).Elem())
	fillFields(t, reflect.ValueOf(&cfg.Channel.WithoutNamespace.NamespaceOptions).Elem())
	cfg.Channel.MaxLength = 7
	cfg.Channel.Namespaces = []Namespace{{Namespace: hub.Namespace{Name: "ns"}}}
	fillFields(t, reflect.ValueOf(&cfg.Channel.Namespaces[0].NamespaceOptions).Elem())

	h := cfg.Hub("")
	requireAllSet(t, "hub.ClientConfig", reflect.ValueOf(h.Client))
	requireAllSet(t, "hub.ChannelConfig.WithoutNamespace", reflect.ValueOf(h.Channels.WithoutNamespace))
	if h.Channels.MaxLength != 7 || len(h.Channels.Namespaces) != 1 || h.Channels.Namespaces[0].Name != "ns" {
		t.Fatalf("channel config not carried over: %+v", h.Channels)
	}
	requireAllSet(t, "hub.Namespace.NamespaceOptions", reflect.ValueOf(h.Channels.Namespaces[0].NamespaceOptions))
	if h.Client.PingInterval != time.Second || h.Channels.WithoutNamespace.HistoryTTL != time.Second {
		t.Errorf("durations not converted: ping_interval %v, history_ttl %v", h.Client.PingInterval, h.Channels.WithoutNamespace.HistoryTTL)
	}
}

// fillFields gives every scalar field of the struct v a non-zero value.
func fillFields(t *testing.T, v reflect.Value) {
	t.Helper()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		switch {
		case v.Type().Field(i).Tag.Get("yaml") == "-":
			// Not in the file (a library's Logger).
		case f.Type() == durationType:
			f.SetInt(int64(time.Second))
		case f.Kind() == reflect.Bool:
			f.SetBool(true)
		case f.CanInt():
			f.SetInt(1)
		case f.CanUint():
			f.SetUint(1)
		case f.CanFloat():
			f.SetFloat(1)
		case f.Kind() == reflect.String:
			f.SetString("x")
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.String:
			f.Set(reflect.ValueOf([]string{"x"}).Convert(f.Type()))
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Struct:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1)) // a list of sections
			fillFields(t, f.Index(0))
		case f.Kind() == reflect.Struct && v.Type().Field(i).Tag.Get("yaml") != "":
			fillFields(t, f) // a section of the hub's options (map)
		case f.Kind() == reflect.Struct:
			// Nested sections (the token keys) are not hub options.
		default:
			t.Fatalf("fillFields: field %s has a kind the test does not know: %s", v.Type().Field(i).Name, f.Kind())
		}
	}
}

func requireAllSet(t *testing.T, what string, v reflect.Value) {
	t.Helper()
	for i := 0; i < v.NumField(); i++ {
		if v.Field(i).IsZero() {
			t.Errorf("%s.%s is not set from the configuration file: give its field a yaml tag, or convert it in config/channel.go", what, v.Type().Field(i).Name)
		}
	}
}
