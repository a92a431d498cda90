package protogen

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// RequireEnv, when set, makes Current fail instead of skip if protoc or a
// plugin is not on PATH; scripts/test.sh installs them and sets it.
const RequireEnv = "HERALD_TEST_REQUIRE_PROTOC"

// Current regenerates the Go code of the package in the working directory
// (a package's tests run there) into a temporary directory and compares
// it with the committed *.pb.go files, so that an edit of a .proto file
// without regeneration, a hand edit of generated code, or code generated
// with other plugin versions (their versions are in the generated headers)
// fails. The command is the package's own: the protoc line of its
// //go:generate directive in generate.go, with its output directories
// ("--*_out=.") pointed at the temporary directory, so the check cannot
// drift from the documented regeneration. The tools it needs are protoc
// and the protoc-gen-NAME plugin of each --NAME_out; without them the test
// is skipped, unless RequireEnv is set. The line naming protoc's version
// is left out of the comparison: another protoc release generates the
// same code.
func Current(t testing.TB) {
	t.Helper()
	src, err := os.ReadFile("generate.go")
	if err != nil {
		t.Fatalf("the package's generate.go: %v", err)
	}
	args, err := generateCommand(src)
	if err != nil {
		t.Fatalf("generate.go: %v", err)
	}
	for _, tool := range tools(args) {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv(RequireEnv) != "" {
				t.Fatalf("%s is not on PATH: cannot check the generated code", tool)
			}
			t.Skipf("%s is not on PATH: cannot check the generated code", tool)
		}
	}
	dir := t.TempDir()
	for i, a := range args {
		if name, ok := strings.CutSuffix(a, "_out=."); ok && strings.HasPrefix(name, "--") {
			args[i] = name + "_out=" + dir
		}
	}
	cmd := exec.Command(args[0], args[1:]...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	generated, err := filepath.Glob(filepath.Join(dir, "*.pb.go"))
	if err != nil {
		t.Fatal(err)
	}
	committed, err := filepath.Glob("*.pb.go")
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range generated {
		generated[i] = filepath.Base(p)
	}
	if !slices.Equal(generated, committed) {
		t.Fatalf("protoc generates %v, the package commits %v: run go generate with the versions in generate.go", generated, committed)
	}
	for _, name := range generated {
		want, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(withoutProtocVersion(got), withoutProtocVersion(want)) {
			t.Errorf("%s differs from what the go:generate line of generate.go generates: run go generate with the versions in generate.go", name)
		}
	}
}

// generateCommand returns the words of the one "//go:generate protoc"
// line of a generate.go. Quoting would need a shell's rules, which go
// generate does not follow exactly, so a line with quotes is refused.
func generateCommand(src []byte) ([]string, error) {
	var found []string
	for _, line := range strings.Split(string(src), "\n") {
		rest, ok := strings.CutPrefix(line, "//go:generate ")
		if !ok {
			continue
		}
		words := strings.Fields(rest)
		if len(words) == 0 || words[0] != "protoc" {
			continue
		}
		if found != nil {
			return nil, fmt.Errorf("more than one //go:generate protoc line")
		}
		if strings.ContainsAny(rest, `"'`+"`") {
			return nil, fmt.Errorf("the //go:generate protoc line has quotes, which this check does not parse")
		}
		found = words
	}
	if found == nil {
		return nil, fmt.Errorf("no //go:generate protoc line")
	}
	return found, nil
}

// tools is protoc and the plugin of each --NAME_out argument.
func tools(args []string) []string {
	out := []string{args[0]}
	for _, a := range args[1:] {
		flag, _, _ := strings.Cut(a, "=")
		if name, ok := strings.CutSuffix(strings.TrimPrefix(flag, "--"), "_out"); ok && strings.HasPrefix(flag, "--") {
			out = append(out, "protoc-gen-"+name)
		}
	}
	return out
}

// withoutProtocVersion drops the generated header's line naming protoc's
// version ("// - protoc  v3.21.12" or "// \tprotoc        v3.21.12").
func withoutProtocVersion(code []byte) []byte {
	var out [][]byte
	for _, line := range bytes.Split(code, []byte("\n")) {
		trimmed := bytes.TrimLeft(bytes.TrimPrefix(line, []byte("//")), " \t-")
		if bytes.HasPrefix(line, []byte("//")) && bytes.HasPrefix(trimmed, []byte("protoc ")) {
			continue
		}
		out = append(out, line)
	}
	return bytes.Join(out, []byte("\n"))
}
