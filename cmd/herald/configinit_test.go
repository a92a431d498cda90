package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldhq/herald/config"
)

func TestConfigInitWritesAWorkingFile(t *testing.T) {
	dir := t.TempDir()
	var secrets, apiKeys []string
	for i, name := range []string{"a.yaml", "b.yaml"} {
		path := filepath.Join(dir, name)
		out, _, err := run(t, "config", "init", path)
		if err != nil || !strings.Contains(out, "wrote "+path) {
			t.Fatalf("init %s: %q %v", name, out, err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v %v, want 0600 (it holds secrets)", name, fi.Mode(), err)
		}
		cfg, err := config.Parse(data)
		if err != nil {
			t.Fatalf("%s does not parse: %v", name, err)
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("%s does not validate: %v", name, err)
		}
		if len(cfg.Client.Token.HMACSecretKey) != 64 || len(cfg.HTTPAPI.Key) != 64 {
			t.Errorf("%s: want 256-bit keys, got %q and %q", name, cfg.Client.Token.HMACSecretKey, cfg.HTTPAPI.Key)
		}
		if cfg.AuthUnconfigured() || len(cfg.Warnings()) != 0 {
			t.Errorf("%s: warnings %v", name, cfg.Warnings())
		}
		// The commented defaults come along.
		if !strings.Contains(string(data), "# 'debug', 'info', 'warn' or 'error'") {
			t.Errorf("%s lacks the example's comments", name)
		}
		checkOut, checkErr, err := run(t, "config", "check", path)
		if err != nil || checkOut != path+": ok\n" || checkErr != "" {
			t.Errorf("check %s: %q %q %v", name, checkOut, checkErr, err)
		}
		secrets = append(secrets, cfg.Client.Token.HMACSecretKey)
		apiKeys = append(apiKeys, cfg.HTTPAPI.Key)
		if secrets[i] == apiKeys[i] {
			t.Errorf("%s: the token secret and the API key are the same", name)
		}
	}
	if secrets[0] == secrets[1] || apiKeys[0] == apiKeys[1] {
		t.Errorf("two runs wrote the same keys: %v %v", secrets, apiKeys)
	}
}

func TestConfigInitKeepsAnExistingFile(t *testing.T) {
	path := writeFile(t, "log: {level: debug}\n")
	_, _, err := run(t, "config", "init", path)
	if err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("want a refusal naming --force, got %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "log: {level: debug}\n" {
		t.Fatalf("the existing file changed: %q", data)
	}
	if _, _, err := run(t, "config", "init", "--force", path); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil || cfg.HTTPAPI.Key == "" {
		t.Errorf("after --force: %+v %v", cfg.HTTPAPI, err)
	}
}

func TestConfigInitDefaultsToHeraldYAML(t *testing.T) {
	t.Chdir(t.TempDir())
	if _, _, err := run(t, "config", "init"); err != nil {
		t.Fatal(err)
	}
	if _, err := config.Load("herald.yaml"); err != nil {
		t.Error(err)
	}
}
