package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigDocs: `herald config docs FILE` writes the tables between the
// markers from the option definitions, leaves the prose alone, and is
// idempotent; a marker that names no key is an error naming it.
func TestConfigDocs(t *testing.T) {
	p := filepath.Join(t.TempDir(), "configuration.md")
	doc := "# Title\n\nprose\n\n<!-- config-table: http -->\nstale\n<!-- end config-table -->\n\nmore prose\n"
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "config", "docs", p); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"prose\n\n<!-- config-table: http -->\n\n| key | default | meaning |", "| `http.idle_timeout` | `120s` |", "<!-- end config-table -->\n\nmore prose\n"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("docs:\n%s\nwant it to contain %q", got, want)
		}
	}
	if strings.Contains(string(got), "stale") {
		t.Errorf("the old table is still there:\n%s", got)
	}
	out, _, err := run(t, "config", "docs", p)
	if again, _ := os.ReadFile(p); err != nil || out != "" || string(again) != string(got) {
		t.Errorf("second run: %q, %v; changed: %v", out, err, string(again) != string(got))
	}
	if err := os.WriteFile(p, []byte("<!-- config-table: no_such_key -->\n<!-- end config-table -->\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "config", "docs", p); err == nil || !strings.Contains(err.Error(), `marker "no_such_key": names no keys`) {
		t.Errorf("unknown key: %v", err)
	}
	if err := os.WriteFile(p, []byte("<!-- config-table: http -->\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "config", "docs", p); err == nil || !strings.Contains(err.Error(), "no <!-- end config-table --> after it") {
		t.Errorf("unterminated table: %v", err)
	}
}
