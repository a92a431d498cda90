package server

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestConfigurationDocCoversEveryKey keeps docs/configuration.md from
// drifting: every key of Config must be named there.
func TestConfigurationDocCoversEveryKey(t *testing.T) {
	doc, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	nsOptions := map[string]bool{}
	for _, k := range yamlKeys(reflect.TypeOf(NamespaceOptions{}), "") {
		nsOptions[k] = true
	}
	for _, key := range yamlKeys(reflect.TypeOf(Config{}), "") {
		leaf := key[strings.LastIndex(key, ".")+1:]
		if strings.HasPrefix(key, "channel.without_namespace.") || strings.HasPrefix(key, "channel.namespaces.") {
			if nsOptions[leaf] || leaf == "name" {
				if !strings.Contains(text, "`"+leaf+"`") {
					t.Errorf("namespace option %q is not documented in docs/configuration.md", leaf)
				}
				continue
			}
		}
		if !strings.Contains(text, "`"+key+"`") {
			t.Errorf("configuration key %q is not documented in docs/configuration.md", key)
		}
	}
}

// yamlKeys lists the dotted YAML keys of a struct type, descending into
// nested structs and slices of structs; inline fields join their parent.
func yamlKeys(t reflect.Type, prefix string) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == reflect.TypeOf(Duration(0)) {
		return nil
	}
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") {
			out = append(out, yamlKeys(f.Type, prefix)...)
			continue
		}
		if name == "" {
			continue
		}
		key := prefix + name
		sub := yamlKeys(f.Type, key+".")
		if len(sub) == 0 {
			out = append(out, key)
		} else {
			out = append(out, sub...)
		}
	}
	return out
}
