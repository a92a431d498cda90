// Package proxyproto is the Go code generated from Centrifugo's gRPC proxy
// protocol (proxy.proto): the client Herald's gRPC proxy calls backends
// with, and the server types a backend written in Go implements.
package proxyproto

// Generated code (proxy.pb.go, proxy_grpc.pb.go) is committed; CI does not
// run protoc. Regenerate after updating proxy.proto with the tools this code
// was generated with:
//
//	protoc              3.21.12 (Debian package protobuf-compiler)
//	protoc-gen-go       v1.36.12 (go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12)
//	protoc-gen-go-grpc  v1.6.2   (go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2)
//
// generate_test.go runs the go:generate line below into a temporary
// directory and compares (internal/test/protogen), when protoc and the plugins
// are on PATH; scripts/test.sh installs them (its "generated code" step)
// so that the check always runs there.

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative proxy.proto
