package config

import (
	"testing"
)

// FuzzParse: no file, however malformed, makes Parse or Validate panic;
// a file Parse accepts is one Validate can judge.
func FuzzParse(f *testing.F) {
	f.Add([]byte(Example()))
	f.Add([]byte("client: {ping_interval: 30, pong_timeout: 1.5}\n"))
	f.Add([]byte("channel:\n  namespaces:\n    - {name: chat, history_size: 10, history_ttl: 60s}\n    - {name: x}\n"))
	f.Add([]byte("proxies: [{name: a, endpoint: 'http://x', static_http_headers: {A: b}}]\n"))
	f.Add([]byte("a: &x {b: 1}\nc: *x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data)
		if err != nil {
			return
		}
		_ = cfg.Validate()
		_ = cfg.Warnings()
	})
}
