package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestServerDoesNotLinkTheLoadTool keeps the load tool (the bench module)
// and its charting code (gonum plot and the fonts, PDF, SVG and image
// packages it brings) out of the server binary.
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
		"github.com/heraldhq/herald/bench/",
		"gonum.org/",
		"codeberg.org/go-fonts/",
		"codeberg.org/go-pdf/",
		"codeberg.org/go-latex/",
		"github.com/ajstarks/svgo",
		"golang.org/x/image/",
		"github.com/coder/websocket", // in the module graph through the Azure SDK, never linked
		"github.com/lxzan/gws",
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if pkg == f || strings.HasPrefix(pkg, f) {
				t.Errorf("cmd/herald depends on %s; the load tool's code belongs in the bench module", pkg)
			}
		}
	}
}

// TestModuleDoesNotRequireTheLoadTool keeps the load tool's dependencies
// (charts, HDR histograms, the WebSocket libraries it compares Herald with)
// out of the module graph every application that embeds Herald downloads:
// they belong to the bench module's go.mod.
func TestModuleDoesNotRequireTheLoadTool(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, goTool, "list", "-m", "all").Output()
	if err != nil {
		t.Fatalf("go list -m all: %v", err)
	}
	forbidden := []string{
		"gonum.org/v1/plot",
		"github.com/HdrHistogram/hdrhistogram-go",
		"github.com/lxzan/gws",
		// Not github.com/coder/websocket: the Azure Service Bus client's
		// module requires it (for its AMQP-over-WebSocket option), so it
		// is in the graph; TestServerDoesNotLinkTheLoadTool keeps it out
		// of the binary.
	}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		for _, f := range forbidden {
			if fields[0] == f {
				t.Errorf("the herald module requires %s; the load tool's dependencies belong in bench/go.mod", f)
			}
		}
	}
}
