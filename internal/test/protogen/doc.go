// Package protogen holds the tests' checks of the Go code generated from
// Herald's .proto files: that the committed code is what the pinned tools
// generate from the committed .proto file (Current), and that a file
// declares exactly a given wire interface (Interface), so that a
// renumbered, renamed or retyped field fails a test rather than a client.
package protogen
