package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func run(t *testing.T, args ...string) (stdout string, err error) {
	t.Helper()
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err = root.Execute()
	return out.String(), err
}

func TestCommandsAndFlags(t *testing.T) {
	out, err := run(t, "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"conns", "latency", "throughput", "maps"} {
		if !strings.Contains(out, c) {
			t.Errorf("herald-bench --help lacks %s:\n%s", c, out)
		}
	}
	for _, c := range newRoot().Commands() {
		if c.Name() == "worker" && !c.Hidden {
			t.Error("the worker command is internal and should be hidden")
		}
	}
	for cmd, flags := range map[string][]string{
		"conns":      {"--url", "--source", "--secret", "--hold", "--settle", "--server-pid"},
		"latency":    {"--subscribers", "--rates", "--step", "--p99-limit", "--csv", "--png", "--title"},
		"throughput": {"--p99", "--probe", "--api"},
		"maps":       {"--keys", "--rate", "--step", "--subscribers", "--page-size", "--store-cmd", "--api"},
		"map-expiry": {"--keys", "--key-ttl", "--batch", "--wait", "--api"},
	} {
		out, err := run(t, cmd, "--help")
		if err != nil {
			t.Fatalf("%s --help: %v", cmd, err)
		}
		for _, f := range flags {
			if !strings.Contains(out, f) {
				t.Errorf("herald-bench %s --help lacks %s", cmd, f)
			}
		}
	}
	if _, err := run(t, "latency", "--format", "xml", "--rates", "1", "--api", "http://127.0.0.1:1/api"); err == nil ||
		!strings.Contains(err.Error(), `--format "xml": want json or protobuf`) {
		t.Errorf("want the format error, got %v", err)
	}
	for args, want := range map[string]string{
		"--keys 0 --api http://127.0.0.1:1/api":      "want whole numbers",
		"--keys 10":                                  "give --api",
		"--page-size 0 --api http://127.0.0.1:1/api": "--page-size 0",
	} {
		if _, err := run(t, append([]string{"maps"}, strings.Fields(args)...)...); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("maps %s: want an error containing %q, got %v", args, want, err)
		}
	}
}

// TestHelpNamesRealFlags: every --flag a command's help text mentions is
// one of its flags (latency's help once named --payload-byte for --payload).
func TestHelpNamesRealFlags(t *testing.T) {
	flagRef := regexp.MustCompile(`--([a-z][a-z0-9-]*)`)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, m := range flagRef.FindAllStringSubmatch(c.Short+"\n"+c.Long, -1) {
			if c.Flags().Lookup(m[1]) == nil && c.InheritedFlags().Lookup(m[1]) == nil && m[1] != "help" {
				t.Errorf("%s: the help mentions --%s, which is not a flag", c.CommandPath(), m[1])
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot())
}
