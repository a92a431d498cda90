// Package golden checks files the code generates and the repository keeps
// (docs tables, an OpenAPI document) against what the code makes of them
// now: a test fails when they differ, and with -update rewrites them.
package golden

import (
	"flag"
	"os"
	"testing"
)

// update is the -update flag of every test binary that checks generated
// files; the packages' go:generate lines pass it.
var update = flag.Bool("update", false, "rewrite the generated files this package's tests check")

// Updating says whether the test run rewrites generated files (-update).
func Updating() bool { return *update }

// Check compares the file at path with what gen makes of its current
// content (nil for a file that does not exist yet, with -update). When they
// differ it fails, naming command, the way to regenerate it; with -update
// it writes the file instead.
func Check(t testing.TB, path, command string, gen func(old []byte) ([]byte, error)) {
	t.Helper()
	old, err := os.ReadFile(path)
	if err != nil && !(*update && os.IsNotExist(err)) {
		t.Fatal(err)
	}
	want, err := gen(old)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
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
	t.Errorf("%s is out of date: run %s", path, command)
}
