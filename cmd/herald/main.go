// Command herald runs the Herald real-time messaging server and its tools.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	if err := newRoot().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "herald:", err)
		os.Exit(1)
	}
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "herald",
		Short:         "Herald: a Centrifugo-compatible real-time messaging server",
		SilenceUsage:  true,
		SilenceErrors: true,
		// --version prints what the version command prints.
		Version: versionString(),
	}
	root.SetVersionTemplate("herald {{.Version}}\n")
	root.AddCommand(serveCommand(), configCommand(), migrateCommand(), tokenCommand(), versionCommand(), healthCommand(), benchCommand())
	_, checkToken, checkSubToken := tokenCheckCommands()
	root.AddCommand(checkToken, checkSubToken)
	return root
}
