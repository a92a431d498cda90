package protogen

import (
	"slices"
	"testing"
)

func TestGenerateCommand(t *testing.T) {
	src := []byte("package x\n\n//go:generate echo hi\n//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-vtproto_out=. --go-vtproto_opt=features=size x.proto\n")
	args, err := generateCommand(src)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"protoc", "--go_out=.", "--go_opt=paths=source_relative", "--go-vtproto_out=.", "--go-vtproto_opt=features=size", "x.proto"}; !slices.Equal(args, want) {
		t.Errorf("args = %q, want %q", args, want)
	}
	if got, want := tools(args), []string{"protoc", "protoc-gen-go", "protoc-gen-go-vtproto"}; !slices.Equal(got, want) {
		t.Errorf("tools = %q, want %q", got, want)
	}
	for name, bad := range map[string]string{
		"none":   "package x\n//go:generate echo hi\n",
		"two":    "//go:generate protoc --go_out=. a.proto\n//go:generate protoc --go_out=. b.proto\n",
		"quoted": "//go:generate protoc --go_out=. \"a b.proto\"\n",
	} {
		if _, err := generateCommand([]byte(bad)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestWithoutProtocVersion(t *testing.T) {
	for in, want := range map[string]string{
		"// versions:\n// \tprotoc-gen-go v1.36.12\n// \tprotoc        v3.21.12\nx": "// versions:\n// \tprotoc-gen-go v1.36.12\nx",
		"// - protoc-gen-go-grpc v1.6.2\n// - protoc             v3.21.12\nx":       "// - protoc-gen-go-grpc v1.6.2\nx",
		"// protoc-gen-go-vtproto version: v0.6.0\nx":                               "// protoc-gen-go-vtproto version: v0.6.0\nx",
	} {
		if out := string(withoutProtocVersion([]byte(in))); out != want {
			t.Errorf("withoutProtocVersion(%q) = %q, want %q", in, out, want)
		}
	}
}
