package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/config"
)

// configConvertCommand writes the Herald file that a Centrifugo v6
// configuration (with the CENTRIFUGO_ environment) means.
func configConvertCommand() *cobra.Command {
	var from string
	cmd := &cobra.Command{
		Use:   "convert FILE",
		Short: "Write the Herald configuration (YAML, to standard output) that a Centrifugo v6 configuration file and the CENTRIFUGO_ environment mean",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return errors.New("config convert needs the path of a Centrifugo configuration file: herald config convert config.json > herald.yaml")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			switch from {
			case config.FormatCentrifugo:
			case config.FormatAuto:
				data, err := os.ReadFile(args[0])
				if err != nil {
					return fmt.Errorf("config convert: %w", err)
				}
				if !config.IsCentrifugo(data, args[0]) {
					return fmt.Errorf("config convert: %s has no key that only Centrifugo has: it reads as a Herald configuration already (--from centrifugo converts it anyway)", args[0])
				}
			default:
				return fmt.Errorf("config convert: --from %q: want centrifugo", from)
			}
			data, err := os.ReadFile(args[0])
			if err != nil {
				return fmt.Errorf("config convert: %w", err)
			}
			out, err := config.ConvertCentrifugo(data, args[0], os.Environ())
			if err != nil {
				return fmt.Errorf("config convert: %s:\n%w", args[0], err)
			}
			// The file written must pass config check: validate it first.
			cfg, err := config.Parse(out)
			if err == nil {
				err = cfg.Validate()
			}
			if err != nil {
				return fmt.Errorf("config convert: %s: the Herald configuration it makes is not valid:\n%w", args[0], err)
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	cmd.Flags().StringVar(&from, "from", config.FormatAuto, "the format of FILE: centrifugo (a Centrifugo v6 file in JSON, YAML or TOML), or auto to require that it is detected as one")
	return cmd
}
