// Package release is the module that pins goreleaser, the tool that makes
// Herald's release builds from goreleaser.yaml (go build -C deploy/release
// github.com/goreleaser/goreleaser/v2). It is a module of its own so the
// product's go.mod does not carry goreleaser's dependencies.
package release
