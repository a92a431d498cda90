// Package tools is the module of the deployment kit's tooling: helm, run
// with `go tool helm` at the version go.mod pins, and the tests of the Helm
// chart in ../helm/herald. It is a module of its own so the product's
// go.mod does not carry Helm's and Kubernetes' dependencies.
package tools
