package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/server"
)

// Centrifugo's configuration subcommands (checkconfig, genconfig,
// defaultconfig, defaultenv, configdoc) and version and serve, with its
// flags and output shapes.

// cfLoad reads the -c file of a Centrifugo subcommand with the CENTRIFUGO_
// environment. A missing file is not an error, as in Centrifugo: the
// environment alone makes the configuration, and notFound says so.
func cfLoad(cmd *cobra.Command, path, format string) (cfg config.Config, notFound bool, err error) {
	if path != "" {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			path, format, notFound = "", config.FormatCentrifugo, true
		}
	}
	cfg, err = loadConfigEnv(path, format, os.Environ())
	if err != nil {
		return cfg, notFound, fmt.Errorf("error getting config: %w", err)
	}
	return cfg, notFound, nil
}

func cfCheckConfigCommand(format string) *cobra.Command {
	var (
		path   string
		strict bool
	)
	cmd := &cobra.Command{
		Use:   "checkconfig",
		Short: "Check configuration file",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, notFound, err := cfLoad(cmd, path, format)
			if err != nil {
				return err
			}
			if notFound {
				return errors.New("config file not found")
			}
			if err := cfg.Validate(); err != nil {
				return fmt.Errorf("error validating config: %w", err)
			}
			// As Centrifugo's checkconfig: unknown keys fail only with
			// --strict (internal/cli/checkconfig.go).
			if err := cfg.Strict(); strict && err != nil {
				return fmt.Errorf("unknown keys in config: %w", err)
			}
			for _, w := range cfg.Warnings() {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&path, "config", "c", "config.json", "path to config file to check")
	cmd.Flags().BoolVarP(&strict, "strict", "s", false, "strict check - fail on unknown fields")
	return cmd
}

// cfGenConfigTree is the file Centrifugo's genconfig writes: new random
// token key, admin password and secret and API key, admin off.
func cfGenConfigTree() map[string]any {
	return map[string]any{
		"client": map[string]any{
			"token":           map[string]any{"hmac_secret_key": randomKey()},
			"allowed_origins": []any{},
		},
		"admin":    map[string]any{"enabled": false, "password": randomKey()[:22], "secret": randomKey()},
		"http_api": map[string]any{"key": randomKey()},
	}
}

func cfGenConfigCommand(format string) *cobra.Command {
	var path string
	cmd := &cobra.Command{
		Use:   "genconfig",
		Short: "Generate minimal configuration file to start with",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := os.Stat(path); err == nil {
				return fmt.Errorf("error: output config file already exists: %s", path)
			}
			b, err := config.EncodeCentrifugoTree(cfGenConfigTree(), path)
			if err != nil {
				return fmt.Errorf("error: %w", err)
			}
			if err := os.WriteFile(path, b, 0o600); err != nil {
				return fmt.Errorf("error: %w", err)
			}
			// What was written must start a node, or it is not left behind.
			cfg, _, err := cfLoad(cmd, path, format)
			if err == nil {
				if verr := cfg.Validate(); verr != nil {
					err = fmt.Errorf("error validating config: %w", verr)
				}
			}
			if err != nil {
				_ = os.Remove(path)
				return err
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&path, "config", "c", "config.json", "path to output config file")
	return cmd
}

// cfBaseTree is Centrifugo's complete default configuration with the keys
// of a base file (-b) over it, and the base file's own tree.
func cfBaseTree(base string) (map[string]any, map[string]any, error) {
	tree := config.CentrifugoDefaultConfigTree()
	if base == "" {
		return tree, nil, nil
	}
	data, err := os.ReadFile(base)
	if err != nil {
		return nil, nil, err
	}
	over, err := config.DecodeCentrifugoTree(data, base)
	if err != nil {
		return nil, nil, fmt.Errorf("base config %s: %w", base, err)
	}
	mergeTree(tree, over)
	return tree, over, nil
}

// mergeTree sets the keys of over in dst, section by section.
func mergeTree(dst, over map[string]any) {
	for k, v := range over {
		sub, isMap := v.(map[string]any)
		cur, curMap := dst[k].(map[string]any)
		if isMap && curMap {
			mergeTree(cur, sub)
			continue
		}
		dst[k] = v
	}
}

func cfDefaultConfigCommand() *cobra.Command {
	var (
		path, base string
		dryRun     bool
	)
	cmd := &cobra.Command{
		Use:   "defaultconfig",
		Short: "Generate full configuration file with defaults",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !dryRun {
				if _, err := os.Stat(path); err == nil {
					return errors.New("error: target file already exists")
				}
			}
			// Without a base file, Centrifugo 6.9.1's own output for the
			// format; with one, its keys over those defaults.
			b, err := config.CentrifugoDefaultConfig(path)
			if err == nil && base != "" {
				var tree map[string]any
				if tree, _, err = cfBaseTree(base); err == nil {
					b, err = config.EncodeCentrifugoTree(tree, path)
				}
			}
			if err != nil {
				return fmt.Errorf("error: %w", err)
			}
			if dryRun {
				fmt.Fprintln(cmd.OutOrStdout(), string(b))
				return nil
			}
			if err := os.WriteFile(path, b, 0o600); err != nil {
				return fmt.Errorf("error: %w", err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&path, "config", "c", "config.json", "path to default config file to generate")
	f.StringVarP(&base, "base", "b", "", "path to the base config file to use")
	f.BoolVarP(&dryRun, "dry-run", "d", false, "dry run mode (do not write file and just print generated config to stdout)")
	return cmd
}

func cfDefaultEnvCommand() *cobra.Command {
	var (
		base        string
		nonZeroOnly bool
	)
	cmd := &cobra.Command{
		Use:   "defaultenv",
		Short: "Generate full environment var list with defaults",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, over, err := cfBaseTree(base)
			if err != nil {
				return fmt.Errorf("error: %w", err)
			}
			inBase := map[string]string{}
			flattenEnv(over, config.CentrifugoEnvPrefix, inBase)
			// Centrifugo 6.9.1's variables, each at its default or at the
			// base file's value.
			for line := range strings.Lines(config.CentrifugoDefaultEnv()) {
				name, val, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "=")
				if v, ok := inBase[name]; ok {
					val = v
				}
				if !nonZeroOnly || isNonZero(inBase, name) {
					fmt.Fprintf(cmd.OutOrStdout(), "%s=%s\n", name, val)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&base, "base", "b", "", "path to the base config file to use")
	cmd.Flags().BoolVar(&nonZeroOnly, "base-non-zero-only", false, "only output environment variables for values which were non zero in base config file")
	return cmd
}

// isNonZero reports whether the base file set the variable's key to
// something other than its type's zero value.
func isNonZero(inBase map[string]string, name string) bool {
	v, ok := inBase[name]
	return ok && v != `""` && v != "0" && v != "false"
}

// flattenEnv writes the variables of tree as Centrifugo's defaultenv
// writes them: strings quoted, lists of strings separated by spaces,
// lists of objects and mappings as quoted JSON, an empty list as "".
func flattenEnv(tree map[string]any, prefix string, out map[string]string) {
	for k, v := range tree {
		name := prefix + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(k))
		switch v := v.(type) {
		case map[string]any:
			flattenEnv(v, name+"_", out)
		case []any:
			out[name] = envList(name, v)
		case string:
			out[name] = strconv.Quote(v)
		default:
			out[name] = fmt.Sprint(v)
		}
	}
}

// envList writes a list as defaultenv does: the lists of named items
// (namespaces, proxies, consumers) as their names, which Centrifugo's
// per-item variables complete (v6.9.1 internal/cli/defaultenv.go).
func envList(name string, v []any) string {
	if len(v) == 0 {
		return `""`
	}
	switch strings.TrimPrefix(name, config.CentrifugoEnvPrefix) {
	case "CHANNEL_NAMESPACES", "RPC_NAMESPACES", "CONSUMERS", "PROXIES":
		names := make([]string, 0, len(v))
		for _, item := range v {
			m, _ := item.(map[string]any)
			n, _ := m["name"].(string)
			names = append(names, n)
		}
		return strconv.Quote(strings.Join(names, " "))
	}
	words := make([]string, 0, len(v))
	for _, item := range v {
		s, ok := item.(string)
		if !ok {
			b, _ := json.Marshal(v)
			return strconv.Quote(string(b))
		}
		words = append(words, s)
	}
	return strings.Join(words, " ")
}

// cfConfigDocCommand prints the Centrifugo key map, what each Centrifugo
// key becomes in Herald, generated from the import's key table. Centrifugo
// serves its documentation as HTML and opens a browser; this always
// prints Markdown (-m is accepted for scripts that pass it).
func cfConfigDocCommand() *cobra.Command {
	var (
		markdown  bool
		section   string
		port      int
		baseLevel int
	)
	cmd := &cobra.Command{
		Use:   "configdoc",
		Short: "Show configuration documentation generated from source code (the Centrifugo key map, as Markdown)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			const open, end = "<!-- centrifugo-key-map -->", "<!-- end centrifugo-key-map -->"
			doc, err := config.UpdateCentrifugoKeyMap(open + "\n" + end)
			if err != nil {
				return fmt.Errorf("error: %w", err)
			}
			doc = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(doc, open), end))
			if section != "" {
				var kept []string
				for i, line := range strings.Split(doc, "\n") {
					if i < 2 || strings.HasPrefix(line, "| `"+section) {
						kept = append(kept, line)
					}
				}
				doc = strings.Join(kept, "\n")
			}
			fmt.Fprintln(cmd.OutOrStdout(), doc)
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&markdown, "markdown", "m", false, "output markdown to stdout (always the case here)")
	f.StringVarP(&section, "section", "s", "", "filter by top-level section name")
	f.IntVarP(&port, "port", "p", 6060, "accepted for Centrifugo's command line; nothing is served")
	f.IntVarP(&baseLevel, "base-level", "l", 0, "accepted for Centrifugo's command line")
	return cmd
}

// cfVersionCommand says what runs under the name centrifugo: Herald, with
// its version, so that no script mistakes it for a Centrifugo release.
func cfVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Version information",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "Herald v%s, Centrifugo v6 command line (Go version: %s)\n", server.Version, runtime.Version())
		},
	}
}

// cfServeCommand is Centrifugo's serve: a static file server for
// development (herald serve, which runs a node, keeps its name under the
// name herald).
func cfServeCommand() *cobra.Command {
	var (
		dir, addr string
		port      int
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run static file server (for development only)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			address := net.JoinHostPort(addr, strconv.Itoa(port))
			fmt.Fprintf(cmd.OutOrStdout(), "start serving %s on %s\n", dir, address)
			srv := &http.Server{Addr: address, Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 10 * time.Second}
			return srv.ListenAndServe()
		},
	}
	f := cmd.Flags()
	f.StringVarP(&dir, "dir", "d", "./", "path to directory")
	f.IntVarP(&port, "port", "p", 3000, "port to serve on")
	f.StringVarP(&addr, "address", "a", "", "interface to serve on (default: all interfaces)")
	return cmd
}
