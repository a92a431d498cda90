// Command herald runs the Herald real-time messaging server and its tools.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/config"
)

func main() {
	if isCentrifugoName(os.Args[0]) {
		// Centrifugo prints its errors to standard output, unprefixed.
		if err := centrifugoRoot().Execute(); err != nil {
			fmt.Fprintln(os.Stdout, err)
			os.Exit(1)
		}
		return
	}
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
	root.AddCommand(centrifugoSubcommands(config.FormatAuto)...)
	addCentrifugoRoot(root)
	return root
}
