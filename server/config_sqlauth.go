package server

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/heraldhq/herald/sqlauth"
)

// SQLAuthConfig is where namespaces' SQL checks run (sqlauth).
type SQLAuthConfig struct {
	// DSN of the database the checks query; empty means
	// engine.postgres.dsn.
	DSN string `yaml:"dsn"`
	// ListenDSN of the connection that listens for invalidations; empty
	// means engine.postgres.listen_dsn, else DSN.
	ListenDSN string `yaml:"listen_dsn"`
	// CacheTTL is how long an answer is reused (5s; negative: never).
	CacheTTL Duration `yaml:"cache_ttl"`
	// Timeout bounds one check (2s).
	Timeout Duration `yaml:"timeout"`
	// Channel is the NOTIFY channel that invalidates cached answers
	// (herald_auth).
	Channel string `yaml:"channel"`
}

// NamespaceSQLChecks are a namespace's SQL checks: queries called with the
// user ($1) and the channel ($2) that answer one boolean.
type NamespaceSQLChecks struct {
	SubscribeCheck string `yaml:"subscribe_check"`
	PublishCheck   string `yaml:"publish_check"`
}

// sqlChecks maps namespace names to their checks; empty when none has one.
func (c Config) sqlChecks() map[string]sqlauth.Checks {
	out := map[string]sqlauth.Checks{}
	add := func(name string, o NamespaceSQLChecks) {
		if o.SubscribeCheck != "" || o.PublishCheck != "" {
			out[name] = sqlauth.Checks{Subscribe: o.SubscribeCheck, Publish: o.PublishCheck}
		}
	}
	add("", c.Channel.WithoutNamespace.NamespaceSQLChecks)
	for _, ns := range c.Channel.Namespaces {
		add(ns.Name, ns.NamespaceSQLChecks)
	}
	return out
}

func (c Config) sqlAuthDSNs() (dsn, listen string) {
	dsn, listen = c.SQLAuth.DSN, c.SQLAuth.ListenDSN
	if dsn == "" && c.Engine.Type == "postgres" {
		dsn = c.Engine.Postgres.DSN
		if listen == "" {
			listen = c.Engine.Postgres.ListenDSN
		}
	}
	return dsn, listen
}

// sqlAuthProblems checks the SQL authorization keys.
func (c Config) sqlAuthProblems() Problems {
	var ps Problems
	bad := func(key, format string, args ...any) {
		ps = append(ps, Problem{Key: key, Message: fmt.Sprintf(format, args...)})
	}
	check := func(key string, o NamespaceOptions) {
		if o.SubscribeCheck != "" && o.SubscribeProxy != "" {
			bad(key+".subscribe_check", "set together with subscribe_proxy: choose one")
		}
		if o.PublishCheck != "" && o.PublishProxy != "" {
			bad(key+".publish_check", "set together with publish_proxy: choose one")
		}
	}
	check("channel.without_namespace", c.Channel.WithoutNamespace)
	for i, ns := range c.Channel.Namespaces {
		check(fmt.Sprintf("channel.namespaces[%d]", i), ns.NamespaceOptions)
	}
	if dsn, _ := c.sqlAuthDSNs(); dsn == "" && len(c.sqlChecks()) > 0 {
		bad("sql_auth.dsn", "required for subscribe_check and publish_check unless engine.type is postgres (then engine.postgres.dsn is used)")
	}
	if t := c.SQLAuth.Timeout.D(); t < 0 || t > time.Minute {
		bad("sql_auth.timeout", "%s: want 0 (the default, %s) to 1m", t, sqlauth.DefaultTimeout)
	}
	return ps
}

// newSQLAuth connects the SQL checks; nil when no namespace has a check.
func newSQLAuth(ctx context.Context, cfg Config, log *slog.Logger) (*sqlauth.Authorizer, error) {
	checks := cfg.sqlChecks()
	if len(checks) == 0 {
		return nil, nil
	}
	dsn, listen := cfg.sqlAuthDSNs()
	a, err := sqlauth.New(ctx, sqlauth.Config{
		DSN: dsn, ListenDSN: listen, Namespaces: checks,
		CacheTTL: cfg.SQLAuth.CacheTTL.D(), Timeout: cfg.SQLAuth.Timeout.D(), Channel: cfg.SQLAuth.Channel,
		Logger: log,
	})
	if err != nil {
		return nil, fmt.Errorf("sql_auth: %w", err)
	}
	return a, nil
}
