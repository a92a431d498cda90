package config

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestOnlyConfigReadsYAML keeps the file format in this package: no other
// package of the module imports the YAML library (tests that read other
// YAML files, such as deployment manifests, may).
func TestOnlyConfigReadsYAML(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, goTool, "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "github.com/heraldhq/herald/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	importers := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		for _, imp := range fields[1:] {
			if !strings.Contains(imp, "yaml") {
				continue
			}
			if fields[0] != "github.com/heraldhq/herald/config" {
				t.Errorf("%s imports %s: only package config reads YAML", fields[0], imp)
			} else {
				importers++
			}
		}
	}
	if importers == 0 {
		t.Error("package config imports no YAML library: has the check gone stale?")
	}
}
