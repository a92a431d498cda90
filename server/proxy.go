package server

import (
	"fmt"
	"log/slog"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/proxy"
)

// newProxy builds the node's proxy router and installs its handlers in h;
// nil when the configuration proxies no event.
func newProxy(cfg Config, h *hub.Handlers, log *slog.Logger) (*proxy.Router, error) {
	opts, used := cfg.proxyOptions()
	if !used {
		return nil, nil
	}
	opts.Logger = log
	r, err := proxy.New(opts)
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	r.Install(h)
	return r, nil
}
