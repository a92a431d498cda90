package api

import (
	"encoding/json"
	"flag"
	"os"
	"regexp"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated docs (docs/api.md's method tables, docs/openapi.json)")

// TestGeneratedDocs fails when docs/api.md's method tables differ from
// what the method table gives; with -update (go generate ./api) it
// rewrites them.
func TestGeneratedDocs(t *testing.T) {
	checkGenerated(t, "../docs/api.md", func(old []byte) ([]byte, error) {
		s, err := updateDocs(string(old))
		return []byte(s), err
	})
}

// checkGenerated compares the file at path with what gen makes of it,
// or with -update writes it.
func checkGenerated(t *testing.T, path string, gen func(old []byte) ([]byte, error)) {
	t.Helper()
	old, err := os.ReadFile(path)
	if err != nil && !(*update && os.IsNotExist(err)) {
		t.Fatal(err)
	}
	want, err := gen(old)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) == string(old) {
		return
	}
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("%s is out of date: run %s", path, docsCommand)
}

// TestGeneratedOpenAPI: docs/openapi.json is OpenAPI()'s document (-update
// rewrites it); it has a path per method and every reference resolves.
func TestGeneratedOpenAPI(t *testing.T) {
	doc := OpenAPI()
	checkGenerated(t, "../docs/openapi.json", func([]byte) ([]byte, error) { return doc, nil })
	var parsed struct {
		Paths      map[string]any `json:"paths"`
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &parsed); err != nil {
		t.Fatal(err)
	}
	for _, m := range methodTable() {
		if _, ok := parsed.Paths["/api/"+m.name]; ok == m.unavailable {
			t.Errorf("%s: path present %v, unavailable %v", m.name, ok, m.unavailable)
		}
	}
	for _, r := range regexp.MustCompile(`"#/components/schemas/([^"]+)"`).FindAllSubmatch(doc, -1) {
		if s, ok := parsed.Components.Schemas[string(r[1])]; !ok || s == nil {
			t.Errorf("reference to %s: no such schema", r[1])
		}
	}
}
