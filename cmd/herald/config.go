package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/config"
)

func configCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Write, check or print configuration"}
	cmd.AddCommand(configInitCommand())
	var (
		checkFormat string
		checkStrict bool
	)
	check := &cobra.Command{
		Use:   "check FILE",
		Short: "Validate a configuration file (with the HERALD_ environment applied, and CENTRIFUGO_ for a Centrifugo file) and report every problem",
		Args:  checkArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfigFormat(args[0], checkFormat)
			if err != nil {
				return err
			}
			if err := cfg.Validate(); err != nil {
				return fmt.Errorf("%s:\n%w", args[0], err)
			}
			if err := strictCheck(cfg, checkStrict); err != nil {
				return fmt.Errorf("%s:\n%w", args[0], err)
			}
			if line := cfg.CentrifugoReport().NotNeededLine(); line != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), "note:", line)
			}
			warnings := cfg.Warnings()
			for _, w := range warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: ok\n", args[0])
			return nil
		},
	}
	addConfigFormatFlag(check, &checkFormat)
	addStrictFlag(check, &checkStrict)
	cmd.AddCommand(check)
	cmd.AddCommand(configConvertCommand())
	cmd.AddCommand(&cobra.Command{
		Use:   "example",
		Short: "Print a commented example configuration with every key",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprint(cmd.OutOrStdout(), config.Example())
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "docs FILE",
		Short: "Rewrite the generated tables of a Markdown file from the option definitions: the reference tables (docs/configuration.md), the Centrifugo key map (docs/migrating-from-centrifugo.md)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := os.ReadFile(args[0])
			if err != nil {
				return fmt.Errorf("config docs: %w", err)
			}
			// A file has reference tables (docs/configuration.md), the
			// Centrifugo key map (docs/migrating-from-centrifugo.md), or both.
			out := string(data)
			if strings.Contains(out, "<!-- config-table:") || !config.HasCentrifugoKeyMap(out) {
				if out, err = config.UpdateDocs(out); err != nil {
					return fmt.Errorf("config docs: %s: %w", args[0], err)
				}
			}
			if config.HasCentrifugoKeyMap(out) {
				if out, err = config.UpdateCentrifugoKeyMap(out); err != nil {
					return fmt.Errorf("config docs: %s: %w", args[0], err)
				}
			}
			if out == string(data) {
				return nil
			}
			if err := os.WriteFile(args[0], []byte(out), 0o644); err != nil {
				return fmt.Errorf("config docs: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: tables rewritten\n", args[0])
			return nil
		},
	})
	return cmd
}

// checkArgs asks for the one file by name and with an example, which
// cobra's "accepts 1 arg(s)" does not.
func checkArgs(_ *cobra.Command, args []string) error {
	switch len(args) {
	case 1:
		return nil
	case 0:
		return errors.New("config check needs the path of a configuration file: herald config check herald.yaml")
	default:
		return fmt.Errorf("config check takes one configuration file, got %d: %s", len(args), strings.Join(args, " "))
	}
}

// loadConfig reads the file (if any, in the format it is detected to be)
// over the defaults and applies the environment; it does not validate.
func loadConfig(path string) (config.Config, error) {
	return loadConfigFormat(path, config.FormatAuto)
}

// loadConfigFormat reads the file (if any) in format over the defaults,
// applies the CENTRIFUGO_ environment to a Centrifugo configuration and
// then the HERALD_ one; it does not validate.
func loadConfigFormat(path, format string) (config.Config, error) {
	return loadConfigEnv(path, format, os.Environ())
}

// loadConfigEnv is loadConfigFormat with the environment given, which
// Centrifugo's flags add to (centrifugo.go).
func loadConfigEnv(path, format string, environ []string) (config.Config, error) {
	if path != "" && (format == "" || format == config.FormatAuto) {
		// Say when a file is taken for Centrifugo's, and why: its reading
		// (and some defaults) differ from a Herald file's.
		if data, err := os.ReadFile(path); err == nil {
			format = config.FormatHerald
			if sign := config.CentrifugoSign(data, path); sign != "" {
				format = config.FormatCentrifugo
				why := "it is " + sign
				if sign != "TOML" && sign != "JSON" {
					why = "it has " + sign + ", which only Centrifugo has"
				}
				fmt.Fprintf(os.Stderr, "note: %s is read as a Centrifugo v6 configuration (%s); --config-format herald reads it as Herald's\n", path, why)
			}
		}
	}
	cfg, got, err := config.LoadFile(path, format, environ)
	if err != nil {
		return cfg, err
	}
	if got == config.FormatHerald {
		for _, kv := range environ {
			if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, config.CentrifugoEnvPrefix) {
				fmt.Fprintf(os.Stderr, "warning: environment variable %s is read only with a Centrifugo configuration (--config-format centrifugo); this one is Herald's\n", name)
			}
		}
	}
	unknown, err := config.ApplyEnv(&cfg, environ)
	if err != nil {
		return cfg, fmt.Errorf("environment: %w", err)
	}
	for _, u := range unknown {
		fmt.Fprintf(os.Stderr, "warning: environment variable %s names no configuration key\n", u)
	}
	return cfg, nil
}

// addStrictFlag adds --strict, which refuses what is otherwise a warning:
// the keys and CENTRIFUGO_ variables of a Centrifugo configuration that
// Centrifugo does not have either.
func addStrictFlag(cmd *cobra.Command, strict *bool) {
	cmd.Flags().BoolVar(strict, "strict", false, "refuse unknown keys and CENTRIFUGO_ variables of a Centrifugo configuration (without it they are warnings, as in Centrifugo)")
}

// strictCheck is what --strict adds to validation.
func strictCheck(cfg config.Config, strict bool) error {
	if !strict {
		return nil
	}
	if err := cfg.Strict(); err != nil {
		return fmt.Errorf("unknown keys (refused by --strict):\n%w", err)
	}
	return nil
}

// addConfigFormatFlag adds --config-format, the format of --config.
func addConfigFormatFlag(cmd *cobra.Command, format *string) {
	cmd.Flags().StringVar(format, "config-format", config.FormatAuto,
		"format of the configuration file: auto (Centrifugo when it has keys only Centrifugo has, such as http_server or client.allowed_origins), herald, or centrifugo (a Centrifugo v6 file in JSON, YAML or TOML, with CENTRIFUGO_ variables; see docs/migrating-from-centrifugo.md)")
}
