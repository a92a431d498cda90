package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestServerDoesNotLinkTheLoadTool keeps the charting code of herald-bench
// (gonum plot and the fonts, PDF, SVG and image packages it brings) out of
// the server binary.
func TestServerDoesNotLinkTheLoadTool(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, goTool, "list", "-deps", "github.com/heraldhq/herald/cmd/herald").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	forbidden := []string{
		"github.com/heraldhq/herald/loadgen",
		"gonum.org/",
		"codeberg.org/go-fonts/",
		"codeberg.org/go-pdf/",
		"codeberg.org/go-latex/",
		"github.com/ajstarks/svgo",
		"golang.org/x/image/",
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if pkg == f || strings.HasPrefix(pkg, f) {
				t.Errorf("cmd/herald depends on %s; the load tool's code belongs in cmd/herald-bench", pkg)
			}
		}
	}
}
