// Command herald-bench is Herald's load and latency tool: it drives any
// server that speaks the Centrifugo client protocol. It is a binary of its
// own, in the bench module (bench/go.mod), so neither the herald server nor
// the module applications embed carries its charts (gonum plot, fonts) or
// the WebSocket libraries it is compared with. Build it from the root of a
// checkout with `go build -C bench -o herald-bench ./cmd/herald-bench`.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRoot().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "herald-bench:", err)
		os.Exit(1)
	}
}
