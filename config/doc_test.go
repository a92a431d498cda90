package config

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
	for _, k := range yamlKeys(reflect.TypeOf(Namespace{}), "") {
		nsOptions[k] = true
	}
	for _, key := range yamlKeys(reflect.TypeOf(Config{}), "") {
		leaf := strings.TrimPrefix(strings.TrimPrefix(key, "channel.without_namespace."), "channel.namespaces.")
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
// sections and lists of sections; inline fields join their parent.
func yamlKeys(t reflect.Type, prefix string) []string {
	var out []string
	for _, o := range options(t) {
		key := prefix + o.key
		et := o.typ
		if et.Kind() == reflect.Slice {
			et = et.Elem()
		}
		if isSection(et) {
			out = append(out, yamlKeys(et, key+".")...)
		} else {
			out = append(out, key)
		}
	}
	return out
}

// TestDocYAMLBlocksAreValid runs every ```yaml block of the README and
// docs/*.md through the same checks as `herald config check`, so examples
// never show a key or value the server refuses. A block that is only part
// of a configuration (an excerpt that does not stand as a file) is marked
// by the line `<!-- fragment -->` right before it, and only has to parse.
// A block marked `<!-- centrifugo -->` is a Centrifugo configuration and is
// read as `herald serve` reads one.
func TestDocYAMLBlocksAreValid(t *testing.T) {
	files, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../README.md")
	blocks, readme := 0, 0
	for _, f := range files {
		doc, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, block := range yamlBlocks(string(doc)) {
			blocks++
			if f == "../README.md" {
				readme++
			}
			var cfg Config
			if block.centrifugo {
				cfg, err = ParseCentrifugo([]byte(block.body), "config.yaml", nil)
			} else {
				cfg, err = Parse([]byte(block.body))
			}
			if err == nil && !block.fragment {
				err = cfg.Validate()
			}
			if err != nil {
				t.Errorf("%s, yaml block %d (line %d): %v", f, i+1, block.line, err)
			}
		}
	}
	if blocks == 0 || readme == 0 {
		t.Fatalf("found %d yaml blocks, %d in README.md: has the documentation moved?", blocks, readme)
	}
}

// yamlBlock is a ```yaml fenced block of a Markdown text.
type yamlBlock struct {
	body       string
	line       int  // of the opening fence, from 1
	fragment   bool // preceded by <!-- fragment -->
	centrifugo bool // preceded by <!-- centrifugo -->
}

// fragmentMarker before a yaml block says that it is an excerpt.
const fragmentMarker = "<!-- fragment -->"

// centrifugoMarker before a yaml block says that it is a Centrifugo file.
const centrifugoMarker = "<!-- centrifugo -->"

// yamlBlocks returns the ```yaml fenced blocks of a Markdown text.
func yamlBlocks(doc string) []yamlBlock {
	lines := strings.Split(doc, "\n")
	var out []yamlBlock
	prev := "" // the last non-blank line before the current one
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(line, "```") {
			if line != "" {
				prev = line
			}
			continue
		}
		open := i
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, lines[i])
		}
		if line == "```yaml" {
			out = append(out, yamlBlock{
				body:       strings.Join(body, "\n") + "\n",
				line:       open + 1,
				fragment:   prev == fragmentMarker,
				centrifugo: prev == centrifugoMarker,
			})
		}
		prev = ""
	}
	return out
}

// TestYAMLBlocksFindsFragments checks the Markdown reading of
// TestDocYAMLBlocksAreValid: fences of other languages are skipped whole,
// and the fragment marker applies to the next block only.
func TestYAMLBlocksFindsFragments(t *testing.T) {
	doc := "text\n\n```yaml\na: 1\n```\n\n" + fragmentMarker + "\n\n```yaml\nb: 2\n```\n" +
		"```sh\n```yaml inside sh is not a block\n```\n```yaml\nc: 3\n```\n"
	got := yamlBlocks(doc)
	want := []yamlBlock{{body: "a: 1\n", line: 3}, {body: "b: 2\n", line: 9, fragment: true}, {body: "c: 3\n", line: 15}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("yamlBlocks = %+v, want %+v", got, want)
	}
}

// TestReferenceTablesAreCurrent fails when the generated tables of
// docs/configuration.md differ from what the option definitions give.
func TestReferenceTablesAreCurrent(t *testing.T) {
	doc, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := UpdateDocs(string(doc))
	if err != nil {
		t.Fatal(err)
	}
	if want != string(doc) {
		t.Fatalf("the reference tables of docs/configuration.md are out of date: run %s", DocsCommand)
	}
}

// TestCentrifugoKeyMapIsCurrent: the key map of
// docs/migrating-from-centrifugo.md is the one the key table makes.
func TestCentrifugoKeyMapIsCurrent(t *testing.T) {
	doc, err := os.ReadFile("../docs/migrating-from-centrifugo.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := UpdateCentrifugoKeyMap(string(doc))
	if err != nil {
		t.Fatal(err)
	}
	if want != string(doc) {
		t.Fatalf("the key map of docs/migrating-from-centrifugo.md is out of date: run go generate ./config (or: herald config docs docs/migrating-from-centrifugo.md)")
	}
}
