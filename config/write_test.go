package config

import (
	"strings"
	"testing"
	"time"
)

// TestWriteAndProfileConfigChecked: client.write_coalesce and the admin
// profile rates are range-checked, and the errors name the key.
func TestWriteAndProfileConfigChecked(t *testing.T) {
	for _, tc := range []struct {
		set func(*Config)
		key string
	}{
		{func(c *Config) { c.Client.WriteCoalesce = time.Duration(-time.Millisecond) }, "client.write_coalesce"},
		{func(c *Config) { c.Client.WriteCoalesce = time.Duration(2 * time.Second) }, "client.write_coalesce"},
		{func(c *Config) { c.Admin.Address = "127.0.0.1:0"; c.Admin.MutexProfileFraction = -1 }, "admin.mutex_profile_fraction"},
		{func(c *Config) { c.Admin.Address = "127.0.0.1:0"; c.Admin.BlockProfileRate = -1 }, "admin.block_profile_rate"},
		{func(c *Config) { c.Admin.MutexProfileFraction = 5 }, "admin.address"},
	} {
		cfg := Default()
		tc.set(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("Validate: %v, want an error naming %s", err, tc.key)
		}
	}
	cfg := Default()
	cfg.Client.WriteCoalesce = time.Duration(5 * time.Millisecond)
	cfg.Admin.Address, cfg.Admin.MutexProfileFraction, cfg.Admin.BlockProfileRate = "127.0.0.1:0", 10, 10000
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if got := cfg.Hub("").Client.WriteCoalesce; got != 5*time.Millisecond {
		t.Fatalf("hub WriteCoalesce = %v, want 5ms", got)
	}
}
