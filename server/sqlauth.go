package server

import (
	"context"
	"fmt"
	"log/slog"

	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/sqlauth"
)

// newSQLAuth connects the SQL checks; nil when no namespace has a check.
func newSQLAuth(ctx context.Context, cfg config.Config, log *slog.Logger, tp trace.TracerProvider) (*sqlauth.Authorizer, error) {
	opts, ok := cfg.SQLAuthOptions()
	if !ok {
		return nil, nil
	}
	opts.Logger, opts.TracerProvider = log, tp
	a, err := sqlauth.New(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("sql_auth: %w", err)
	}
	return a, nil
}
