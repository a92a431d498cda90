// Command herald runs the Herald real-time messaging server and its tools.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/config"
)

func main() {
	// Under the name centrifugo, or as `herald centrifugo ARGS` (what a
	// compose file's `command: centrifugo -c config.json` becomes with the
	// image's entrypoint /herald), the command line is Centrifugo's.
	if args, ok := centrifugoArgs(os.Args); ok {
		root := centrifugoRoot()
		root.SetArgs(args)
		// Centrifugo prints its errors to standard output, unprefixed.
		if err := root.Execute(); err != nil {
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
