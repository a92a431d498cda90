package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/heraldhq/herald/config"
)

// Centrifugo's command line as an alias set. Compose files, charts,
// systemd units and scripts call `centrifugo -c config.json
// --client.insecure --http_server.port 9000`, `centrifugo gentoken -u 42`
// and so on; started under the name centrifugo the binary answers them
// with Centrifugo v6's flags, arguments and output, and under the name
// herald its root takes the same flags (docs/cli-centrifugo.md).

// centrifugoName is the program name that selects Centrifugo's command line.
const centrifugoName = "centrifugo"

// isCentrifugoName reports whether arg0 (os.Args[0]) names the binary
// centrifugo: a symlink, a copy or a second name in an image.
func isCentrifugoName(arg0 string) bool {
	base := strings.TrimSuffix(filepath.Base(arg0), ".exe")
	return base == centrifugoName
}

// centrifugoArgs says whether a command line (os.Args) is Centrifugo's,
// and its arguments: those after the program name centrifugo, or after
// herald's first argument centrifugo.
func centrifugoArgs(osArgs []string) ([]string, bool) {
	switch {
	case len(osArgs) == 0:
		return nil, false
	case isCentrifugoName(osArgs[0]):
		return osArgs[1:], true
	case len(osArgs) > 1 && osArgs[1] == centrifugoName:
		return osArgs[2:], true
	}
	return nil, false
}

// centrifugoFlag is one flag of Centrifugo's root command: the
// configuration key it sets, its shorthand and its default as Centrifugo
// declares them.
type centrifugoFlag struct {
	key, short, def, usage string
	boolean                bool
}

// centrifugoFlags are Centrifugo v6's root flags, in its order. Each sets
// the key of the same name, over the CENTRIFUGO_ variables and the file.
var centrifugoFlags = []centrifugoFlag{
	{key: "pid_file", usage: "optional path to create PID file"},
	{key: "http_server.address", short: "a", usage: "interface address to listen on"},
	{key: "http_server.port", short: "p", def: "8000", usage: "port to bind HTTP server to"},
	{key: "http_server.internal_address", usage: "custom interface address to listen on for internal endpoints"},
	{key: "http_server.internal_port", usage: "custom port for internal endpoints"},
	{key: "engine.type", def: "memory", usage: "engine to use: memory or redis"},
	{key: "broker.enabled", boolean: true, usage: "enable broker"},
	{key: "broker.type", def: "memory", usage: "broker to use: memory, redis or nats"},
	{key: "presence_manager.enabled", boolean: true, usage: "enable presence manager"},
	{key: "presence_manager.type", def: "memory", usage: "presence manager to use: memory or redis"},
	{key: "map_broker.type", def: "memory", usage: "map broker to use: memory, redis or postgres"},
	{key: "log.level", def: "info", usage: "set the log level: trace, debug, info, warn, error, fatal or none"},
	{key: "log.file", usage: "optional log file - if not specified logs go to STDOUT"},
	{key: "debug.enabled", boolean: true, usage: "enable debug endpoints"},
	{key: "admin.enabled", boolean: true, usage: "enable admin web interface"},
	{key: "admin.external", boolean: true, usage: "expose admin web interface on external port"},
	{key: "prometheus.enabled", boolean: true, usage: "enable Prometheus metrics endpoint"},
	{key: "swagger.enabled", boolean: true, usage: "enable Swagger UI endpoint describing server HTTP API"},
	{key: "health.enabled", boolean: true, usage: "enable health check endpoint"},
	{key: "uni_websocket.enabled", boolean: true, usage: "enable unidirectional websocket endpoint"},
	{key: "uni_sse.enabled", boolean: true, usage: "enable unidirectional SSE (EventSource) endpoint"},
	{key: "uni_http_stream.enabled", boolean: true, usage: "enable unidirectional HTTP-streaming endpoint"},
	{key: "sse.enabled", boolean: true, usage: "enable bidirectional SSE (EventSource) endpoint (with emulation layer)"},
	{key: "http_stream.enabled", boolean: true, usage: "enable bidirectional HTTP-streaming endpoint (with emulation layer)"},
	{key: "init.enabled", boolean: true, usage: "enable connection init endpoint"},
	{key: "client.insecure", boolean: true, usage: "start in insecure client mode"},
	{key: "http_api.insecure", boolean: true, usage: "use insecure API mode"},
	{key: "http_api.external", boolean: true, usage: "expose API handler on external port"},
	{key: "admin.insecure", boolean: true, usage: "use insecure admin mode – no auth required for admin socket"},
	{key: "grpc_api.enabled", boolean: true, usage: "enable GRPC API server"},
	{key: "grpc_api.port", def: "10000", usage: "port to bind GRPC API server to"},
	{key: "uni_grpc.enabled", boolean: true, usage: "enable unidirectional GRPC endpoint"},
	{key: "uni_grpc.port", def: "11000", usage: "port to bind unidirectional GRPC server to"},
}

// addCentrifugoFlags declares Centrifugo's root flags on fs.
func addCentrifugoFlags(fs *pflag.FlagSet) {
	for _, f := range centrifugoFlags {
		if f.boolean {
			fs.BoolP(f.key, f.short, false, f.usage)
		} else {
			fs.StringP(f.key, f.short, f.def, f.usage)
		}
	}
}

// centrifugoFlagEnv returns environ with a CENTRIFUGO_ variable for every
// Centrifugo flag given on the command line, replacing a variable of the
// same name. A flag thus goes through the same key import as the file and
// the variables do (--http_server.port 9000 means what http_server.port:
// 9000 means in a file) and wins over both, Centrifugo's order. The map
// returned names each such variable's flag, for messages.
func centrifugoFlagEnv(fs *pflag.FlagSet, environ []string) ([]string, map[string]string) {
	set := map[string]string{}
	var add []string
	for _, f := range centrifugoFlags {
		fl := fs.Lookup(f.key)
		if fl == nil || !fl.Changed {
			continue
		}
		name := config.CentrifugoEnvPrefix + strings.ToUpper(strings.ReplaceAll(f.key, ".", "_"))
		set[name] = "--" + f.key
		add = append(add, name+"="+fl.Value.String())
	}
	if len(add) == 0 {
		return environ, set
	}
	out := make([]string, 0, len(environ)+len(add))
	for _, kv := range environ {
		if name, _, _ := strings.Cut(kv, "="); set[name] == "" {
			out = append(out, kv)
		}
	}
	return append(out, add...), set
}

// flagNames rewrites the variables that stand for flags in an error back
// into the flags' names, so that a problem names what the user typed.
func flagNames(err error, flagVars map[string]string) error {
	if err == nil || len(flagVars) == 0 {
		return err
	}
	msg := err.Error()
	for name, flag := range flagVars {
		msg = strings.ReplaceAll(msg, name, flag)
	}
	if msg == err.Error() {
		return err
	}
	return errors.New(msg)
}

// loadCentrifugoRun loads the configuration of Centrifugo's root command:
// the file (a missing one is a warning, as in Centrifugo, and the
// environment and flags alone make the configuration), the CENTRIFUGO_
// variables and the flags over both. format is FormatCentrifugo under the
// name centrifugo and FormatAuto under the name herald.
func loadCentrifugoRun(cmd *cobra.Command, path, format string) (config.Config, string, error) {
	environ, flagVars := centrifugoFlagEnv(cmd.Flags(), os.Environ())
	if path != "" {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(cmd.ErrOrStderr(), "warning: config file %s not found, continue using environment and flag options\n", path)
			path = ""
			format = config.FormatCentrifugo
		}
	}
	if format == config.FormatAuto && path != "" && len(flagVars) > 0 {
		// The flags are Centrifugo's keys; a Herald file cannot take them.
		if data, err := os.ReadFile(path); err == nil && !config.IsCentrifugo(data, path) {
			return config.Config{}, "", fmt.Errorf("%s is a Herald configuration and Centrifugo's flags (%s) set Centrifugo keys: use herald serve and its flags with it", path, strings.Join(sortedValues(flagVars), ", "))
		}
	}
	cfg, err := loadConfigEnv(path, format, environ)
	return cfg, path, flagNames(err, flagVars)
}

// sortedValues lists a map's values in a stable order.
func sortedValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, f := range centrifugoFlags {
		for _, v := range m {
			if v == "--"+f.key {
				out = append(out, v)
			}
		}
	}
	return out
}

// runCentrifugoRoot runs a node as `centrifugo` does with no subcommand.
// Centrifugo never makes up keys, so neither does this.
func runCentrifugoRoot(cmd *cobra.Command, path, format string) error {
	cfg, path, err := loadCentrifugoRun(cmd, path, format)
	if err != nil {
		return err
	}
	return runNode(cmd, cfg, nodeOptions{configPath: path})
}

// centrifugoRoot is the command line under the name centrifugo:
// Centrifugo v6's root command and subcommands.
func centrifugoRoot() *cobra.Command {
	var configPath string
	root := &cobra.Command{
		Use:           centrifugoName,
		Short:         "Centrifugo's command line, served by Herald",
		Long:          "Herald under the name centrifugo: Centrifugo v6's flags and subcommands (docs/cli-centrifugo.md)",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCentrifugoRoot(cmd, configPath, config.FormatCentrifugo)
		},
	}
	root.Flags().StringVarP(&configPath, "config", "c", "config.json", "path to config file")
	addCentrifugoFlags(root.Flags())
	f := config.FormatCentrifugo
	root.AddCommand(cfVersionCommand(), cfServeCommand(), cfCheckTokenCommand(f, false), cfCheckTokenCommand(f, true))
	root.AddCommand(centrifugoSubcommands(f)...)
	return root
}

// centrifugoSubcommands are the Centrifugo subcommands whose names Herald
// does not use for something else, so that herald takes them too (herald's
// version, serve, checktoken and checksubtoken keep their own output).
// format is the format their -c file is read in.
func centrifugoSubcommands(format string) []*cobra.Command {
	return []*cobra.Command{
		cfCheckConfigCommand(format), cfGenConfigCommand(format), cfGenTokenCommand(format, false), cfGenTokenCommand(format, true),
		cfDefaultConfigCommand(), cfDefaultEnvCommand(), cfConfigDocCommand(),
	}
}

// addCentrifugoRoot gives herald's root Centrifugo's root flags: `herald
// -c config.json --client.insecure` runs a node as centrifugo would, with
// the file read in whichever format it is. herald alone still prints the
// help.
func addCentrifugoRoot(root *cobra.Command) {
	var configPath string
	root.Flags().StringVarP(&configPath, "config", "c", "", "run a node as centrifugo -c does: a Centrifugo v6 file (or Herald's, without Centrifugo's flags)")
	addCentrifugoFlags(root.Flags())
	// Hidden, so that herald's help stays Herald's; centrifugo --help lists them.
	for _, f := range centrifugoFlags {
		_ = root.Flags().MarkHidden(f.key)
	}
	root.Long = root.Short + "\n\nherald -c FILE with Centrifugo's root flags (http_server.port, client.insecure and the others centrifugo --help lists) runs a node as centrifugo -c FILE does: docs/cli-centrifugo.md."
	root.Args = cobra.NoArgs
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		if cmd.Flags().NFlag() == 0 {
			return cmd.Help()
		}
		return runCentrifugoRoot(cmd, configPath, config.FormatAuto)
	}
}
