package config

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// centrifugoDefaultsDir holds Centrifugo 6.9.1's own defaultconfig and
// defaultenv output (its README says how they were made).
const centrifugoDefaultsDir = "centrifugo-6.9.1"

// centrifugoDefaultEnv reads defaultenv's output as a shell would set it:
// NAME="value" with the quotes removed.
func centrifugoDefaultEnv(t testing.TB) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(centrifugoDefaultsDir, "env.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		name, val, _ := strings.Cut(line, "=")
		if u, err := strconv.Unquote(val); err == nil {
			val = u
		}
		env = append(env, name+"="+val)
	}
	return env
}

// TestCentrifugoDefaultConfig: Centrifugo's complete default configuration,
// in each of its formats and as variables, is taken with no problem, no
// unknown key and nothing named as not needed (every value is a default),
// and validates.
func TestCentrifugoDefaultConfig(t *testing.T) {
	cases := map[string]struct {
		file string
		env  bool
	}{
		"json":     {file: "config.json"},
		"yaml":     {file: "config.yaml"},
		"toml":     {file: "config.toml"},
		"env":      {env: true},
		"json+env": {file: "config.json", env: true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			data := []byte("{}")
			path := "env.json"
			if c.file != "" {
				var err error
				path = filepath.Join(centrifugoDefaultsDir, c.file)
				if data, err = os.ReadFile(path); err != nil {
					t.Fatal(err)
				}
			}
			var env []string
			if c.env {
				env = centrifugoDefaultEnv(t)
			}
			cfg, err := ParseCentrifugo(data, path, env)
			if err != nil {
				t.Fatalf("refused:\n%v", err)
			}
			r := cfg.CentrifugoReport()
			if len(r.Unknown) > 0 {
				t.Errorf("unknown keys or variables:\n%v", r.Unknown)
			}
			if len(r.NotNeeded) > 0 {
				t.Errorf("named as not needed, though every value is Centrifugo's default: %v", r.NotNeeded)
			}
			if err := cfg.Strict(); err != nil {
				t.Errorf("strict: %v", err)
			}
			// Centrifugo's defaults configure no key; Validate's only
			// concern is that, which serve answers with generated keys.
			cfg.Client.Token.HMACSecretKey = "a-secret-of-at-least-32-bytes-long-xx"
			cfg.HTTPAPI.Key = "an-api-key-long-enough-for-herald-xx"
			if err := cfg.Validate(); err != nil {
				t.Errorf("does not validate:\n%v", err)
			}
		})
	}
}

// TestCentrifugoKeysAllClassified: each key of Centrifugo's defaults, set
// to a value that is not its default, is known (no unknown-key warning)
// and has its own treatment: mapped to Herald's key, named as not needed,
// or refused with its row's note, never only by the fallback for a key of
// Centrifugo's that no row names. A key a new Centrifugo release adds
// fails here until the table says what it means.
func TestCentrifugoKeysAllClassified(t *testing.T) {
	tb := newCFTables()
	eachLeaf(tb.defaults, "", func(key string, _ any) {
		_, ps, report := mapCentrifugoReport(treeWith(key, "not-a-default"))
		if len(report.Unknown) > 0 {
			t.Errorf("%s: taken for unknown: %v", key, report.Unknown)
		}
		for _, p := range ps {
			if strings.HasPrefix(p.Message, "Herald has no such option") {
				t.Errorf("%s: no row of the key table says what it means in Herald", key)
			}
		}
	})
}
