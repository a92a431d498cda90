// Command herald-bench is Herald's load and latency tool: it drives any
// server that speaks the Centrifugo client protocol. It is a binary of its
// own so the herald server does not link its charts (gonum plot, fonts).
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
