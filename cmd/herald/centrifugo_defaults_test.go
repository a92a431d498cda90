package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Centrifugo 6.9.1's own defaultconfig and defaultenv output
// (config/centrifugo-6.9.1/README.md says how they were made).
var cfDefaultsDir = filepath.Join("..", "..", "config", "centrifugo-6.9.1")

// TestServeCentrifugoDefaultConfig: herald config check takes Centrifugo's
// complete default configuration in JSON, YAML and TOML and its complete
// default environment, strictly, and herald serve starts with each.
func TestServeCentrifugoDefaultConfig(t *testing.T) {
	for _, name := range []string{"config.json", "config.yaml", "config.toml"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(cfDefaultsDir, name)
			if out, errOut, err := run(t, "config", "check", "--strict", path); err != nil || !strings.Contains(out, ": ok") {
				t.Fatalf("config check --strict %s: %v\n%s%s", name, err, out, errOut)
			}
			if _, _, err := run(t, "checkconfig", "--strict", "-c", path); err != nil {
				t.Errorf("checkconfig --strict -c %s: %v", name, err)
			}
			r := startServe(t, "--strict", "--config", path)
			r.waitFor(t, "herald listening")
			if strings.Contains(r.output(), "not needed by Herald") {
				t.Errorf("every value is Centrifugo's default, yet some are named as not needed:\n%s", r.output())
			}
			r.stop(t)
		})
	}
	t.Run("env", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join(cfDefaultsDir, "env.txt"))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			name, val, _ := strings.Cut(line, "=")
			if u, err := strconv.Unquote(val); err == nil {
				val = u // as a shell sets NAME="value"
			}
			t.Setenv(name, val)
		}
		empty := filepath.Join(t.TempDir(), "config.json")
		if err := os.WriteFile(empty, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, errOut, err := run(t, "config", "check", "--strict", empty); err != nil {
			t.Fatalf("config check --strict with defaultenv: %v\n%s%s", err, out, errOut)
		}
		r := startServe(t, "--strict", "--config-format", "centrifugo")
		r.waitFor(t, "herald listening")
		r.stop(t)
	})
}

// TestCentrifugoUnknownKeys: a key Centrifugo does not have either is a
// warning with the key it is likely a misspelling of, as Centrifugo warns
// and starts; --strict refuses it. A key Herald does not need, set to
// other than Centrifugo's default, is named once at start-up.
func TestCentrifugoUnknownKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	file := `{"client": {"token": {"hmac_secret_key": "a-secret-of-at-least-32-bytes-long-xx"}, "allowed_origins": [], "pnig_interval": "25s"},
	  "http_api": {"key": "an-api-key-long-enough-for-herald-xx"},
	  "engine": {"redis": {"io_timeout": "10s", "connect_timeout": "3s"}}}`
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := run(t, "config", "check", path)
	if err != nil || !strings.Contains(out, ": ok") {
		t.Fatalf("config check: %v\n%s%s", err, out, errOut)
	}
	const warn = `client.pnig_interval: unknown key: not an option of Centrifugo 6.9.1; it is not used (did you mean "client.ping_interval"?)`
	if !strings.Contains(errOut, "warning: "+warn) {
		t.Errorf("config check: no warning %q in:\n%s", warn, errOut)
	}
	for _, args := range [][]string{
		{"config", "check", "--strict", path},
		{"serve", "--strict", "--address", "127.0.0.1:0", "--config", path},
		{"checkconfig", "--strict", "-c", path},
	} {
		if _, _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), "client.pnig_interval") {
			t.Errorf("%v: %v, want the unknown key refused", args, err)
		}
	}
	if _, _, err := run(t, "checkconfig", "-c", path); err != nil {
		t.Errorf("checkconfig without --strict: %v", err)
	}
	r := startServe(t, "--config", path)
	log := r.waitFor(t, "herald listening")
	if !strings.Contains(log, `level=WARN msg="client.pnig_interval: unknown key`) || !strings.Contains(log, `did you mean \"client.ping_interval\"`) {
		t.Errorf("serve: no warning %q in:\n%s", warn, log)
	}
	if n := strings.Count(log, "not needed by Herald"); n != 1 || !strings.Contains(log, "engine.redis.connect_timeout, engine.redis.io_timeout") {
		t.Errorf("serve: want one line naming the keys not needed, got %d in:\n%s", n, log)
	}
	r.stop(t)
}
