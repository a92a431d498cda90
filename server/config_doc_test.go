package server

import (
	"os"
	"path/filepath"
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

// TestDocYAMLBlocksAreValid runs every ```yaml block of the README and
// docs/*.md through the same checks as `herald config check`, so examples
// never show a key or value the server refuses.
func TestDocYAMLBlocksAreValid(t *testing.T) {
	files, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../README.md")
	blocks := 0
	for _, f := range files {
		doc, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, block := range yamlBlocks(string(doc)) {
			blocks++
			cfg, err := ParseConfig([]byte(block))
			if err == nil {
				err = cfg.Validate()
			}
			if err != nil {
				t.Errorf("%s, yaml block %d: %v", f, i+1, err)
			}
		}
	}
	if blocks == 0 {
		t.Fatal("found no yaml blocks: has the documentation moved?")
	}
}

// yamlBlocks returns the bodies of the ```yaml fenced blocks of a
// Markdown text.
func yamlBlocks(doc string) []string {
	var out []string
	for {
		_, rest, ok := strings.Cut(doc, "```yaml\n")
		if !ok {
			return out
		}
		body, after, ok := strings.Cut(rest, "```")
		if !ok {
			return out
		}
		out = append(out, body)
		doc = after
	}
}
