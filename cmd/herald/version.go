package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/server"
)

func versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print Herald's version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "herald", server.Version)
		},
	}
}
