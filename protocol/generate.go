package protocol

// Generated code (client.pb.go, client_vtproto.pb.go) is committed; CI does
// not run protoc. Regenerate after editing client.proto with the tools this
// code was generated with:
//
//	protoc                 3.21.12 (Debian package protobuf-compiler)
//	protoc-gen-go          v1.36.12 (go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12)
//	protoc-gen-go-vtproto  v0.6.0   (go install github.com/planetscale/vtprotobuf/cmd/protoc-gen-go-vtproto@v0.6.0)
//
// Only the marshal, unmarshal and size vtproto features are generated: the
// pool feature would make callers responsible for returning messages.
//
// generate_test.go runs the go:generate line below into a temporary
// directory and compares (internal/test/protogen), when protoc and the plugins
// are on PATH; scripts/test.sh installs them (its "generated code" step)
// so that the check always runs there.

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-vtproto_out=. --go-vtproto_opt=paths=source_relative,features=marshal+unmarshal+size client.proto
