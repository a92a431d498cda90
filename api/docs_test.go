package api

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/heraldhq/herald/internal/test/golden"
)

// TestGeneratedDocs fails when docs/api.md's method tables differ from
// what the method table gives; with -update (go generate ./api) it
// rewrites them.
func TestGeneratedDocs(t *testing.T) {
	golden.Check(t, "../docs/api.md", docsCommand, func(old []byte) ([]byte, error) {
		s, err := updateDocs(string(old))
		return []byte(s), err
	})
}

// TestGeneratedOpenAPI: docs/openapi.json is OpenAPI()'s document (-update
// rewrites it); it has a path per method and every reference resolves.
func TestGeneratedOpenAPI(t *testing.T) {
	doc := OpenAPI()
	golden.Check(t, "../docs/openapi.json", docsCommand, func([]byte) ([]byte, error) { return doc, nil })
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
