package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/config"
)

// configInitCommand writes a configuration file that works as it is: the
// commented example with fresh secrets in place of the empty keys.
func configInitCommand() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "init [FILE]",
		Short: "Write a working configuration file (default herald.yaml) with a fresh token secret and API key",
		Long: `Write the commented example configuration (herald config example) to FILE,
herald.yaml unless given, with a fresh random client.token.hmac_secret_key and
http_api.key. The file is created readable by its owner only, and an existing
file is left alone unless --force is given.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := "herald.yaml"
			if len(args) == 1 {
				path = args[0]
			}
			keys := newGeneratedKeys()
			text, err := initialConfig(keys, time.Now())
			if err != nil {
				return err
			}
			flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
			if force {
				flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			}
			f, err := os.OpenFile(path, flags, 0o600)
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("%s exists; pass --force to replace it (its keys are then lost)", path)
			}
			if err != nil {
				return fmt.Errorf("config init: %w", err)
			}
			if _, err := f.WriteString(text); err != nil {
				_ = f.Close()
				return fmt.Errorf("config init: write %s: %w", path, err)
			}
			if err := f.Close(); err != nil {
				return fmt.Errorf("config init: write %s: %w", path, err)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "wrote %s with a new token secret and API key (keep it private)\n", path)
			fmt.Fprintf(out, "  run it:         herald serve --config %s\n", path)
			fmt.Fprintf(out, "  mint a token:   herald token --config %s --user demo\n", path)
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "replace FILE if it exists")
	return cmd
}

// httpAPIKeyLine is the http_api section's empty key line in the example.
var httpAPIKeyLine = regexp.MustCompile(`(?m)^http_api:\n(?:  .*\n)*?  key: ""`)

// initialConfig is the example configuration with keys filled in. It
// checks that each key was found exactly once, so a change to the example
// cannot silently produce a file without secrets.
func initialConfig(keys generatedKeys, now time.Time) (string, error) {
	text := config.Example()
	for _, r := range []struct{ section, empty, set string }{
		// client.subscription_token has an hmac_secret_key too: the one
		// to fill is the first after client.token's heading.
		{"\n  token:\n", `    hmac_secret_key: ""`, fmt.Sprintf(`    hmac_secret_key: %q`, keys.HMACSecret)},
	} {
		head, body := "", text
		if r.section != "" {
			i := strings.Index(text, r.section)
			if i < 0 || strings.Count(text, r.section) != 1 {
				return "", fmt.Errorf("config init: the example configuration has %d lines %q, want 1", strings.Count(text, r.section), strings.TrimSpace(r.section))
			}
			head, body = text[:i], text[i:]
		} else if n := strings.Count(text, r.empty); n != 1 {
			return "", fmt.Errorf("config init: the example configuration has %d lines %q, want 1", n, strings.TrimSpace(r.empty))
		}
		if !strings.Contains(body, r.empty) {
			return "", fmt.Errorf("config init: the example configuration has no line %q", strings.TrimSpace(r.empty))
		}
		text = head + strings.Replace(body, r.empty, r.set, 1)
	}
	// http_api's key, not grpc_api's (that API is off by default): the
	// first key line of the http_api section.
	if n := len(httpAPIKeyLine.FindAllStringIndex(text, -1)); n != 1 {
		return "", fmt.Errorf("config init: the example configuration has %d http_api sections with an empty key, want 1", n)
	}
	m := httpAPIKeyLine.FindString(text)
	text = strings.Replace(text, m, strings.TrimSuffix(m, `""`)+fmt.Sprintf("%q", keys.APIKey), 1)
	header := fmt.Sprintf("# Written by \"herald config init\" on %s. client.token.hmac_secret_key and\n"+
		"# http_api.key are fresh random secrets: keep this file private.\n", now.UTC().Format(time.DateOnly))
	return header + text, nil
}
