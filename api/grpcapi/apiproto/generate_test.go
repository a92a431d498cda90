package apiproto_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedCodeIsCurrent regenerates the Go code from api.proto into a
// temporary directory and compares it with the committed files, so that an
// edit of api.proto without regeneration (or a hand edit of the generated
// code) fails. It needs protoc, protoc-gen-go and protoc-gen-go-grpc (see
// generate.go) and skips without them, unless HERALD_TEST_REQUIRE_PROTOC
// is set (scripts/test.sh installs them and sets it). The line naming
// protoc's version is left out of the comparison: another protoc release
// generates the same code.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	for _, tool := range []string{"protoc", "protoc-gen-go", "protoc-gen-go-grpc"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("HERALD_TEST_REQUIRE_PROTOC") != "" {
				t.Fatalf("%s is not on PATH: cannot check the generated code", tool)
			}
			t.Skipf("%s is not on PATH: cannot check the generated code", tool)
		}
	}
	dir := t.TempDir()
	cmd := exec.Command("protoc", "--go_out="+dir, "--go_opt=paths=source_relative",
		"--go-grpc_out="+dir, "--go-grpc_opt=paths=source_relative", "api.proto")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("protoc: %v\n%s", err, out)
	}
	for _, name := range []string{"api.pb.go", "api_grpc.pb.go"} {
		want, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(withoutProtocVersion(got), withoutProtocVersion(want)) {
			t.Errorf("%s differs from what protoc generates from api.proto: run go generate ./api/grpcapi/apiproto with the versions in generate.go", name)
		}
	}
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
