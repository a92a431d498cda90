package server

import (
	"fmt"
	"log/slog"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/consumer"
	"github.com/heraldhq/herald/hub"
	"go.opentelemetry.io/otel/trace"
)

// newConsumers builds the enabled consumers, which apply their commands
// through the API's executor (whether or not the HTTP API is on); nil
// when none is enabled.
func newConsumers(cfg config.Config, h *hub.Hub, log *slog.Logger, tp trace.TracerProvider) (*consumer.Group, error) {
	cfgs := cfg.Consumers()
	if len(cfgs) == 0 {
		return nil, nil
	}
	apiCfg := cfg.HTTPAPI.API()
	apiCfg.Logger, apiCfg.TracerProvider = log, tp
	exec, err := api.NewExecutor(h, apiCfg)
	if err != nil {
		return nil, fmt.Errorf("consumers: %w", err)
	}
	g, err := consumer.NewGroup(cfgs, exec, h.NodeID(), log)
	if err != nil {
		return nil, fmt.Errorf("consumers: %w", err)
	}
	return g, nil
}
