package config

import (
	"fmt"
	"time"

	"github.com/heraldhq/herald/sqlauth"
)

// SQLAuthConfig is where namespaces' SQL checks run (sqlauth).
type SQLAuthConfig struct {
	DSN       string        `yaml:"dsn" defaultdoc:"'engine.postgres.dsn'" doc:"the database the namespaces' 'subscribe_check' and 'publish_check' query; empty: 'engine.postgres.dsn'; required when the engine is not PostgreSQL"`
	ListenDSN string        `yaml:"listen_dsn" defaultdoc:"'engine.postgres.listen_dsn', else 'sql_auth.dsn'" doc:"the connection that LISTENs for cache invalidations; it needs a session of its own (not a transaction-mode pooler)"`
	CacheTTL  time.Duration `yaml:"cache_ttl" default:"5s" doc:"how long an answer (action, user, channel) is reused. While the listening connection is down nothing is cached"`
	Timeout   time.Duration `yaml:"timeout" default:"2s" doc:"a check that takes longer answers error 100 (at most 1m)"`
	Channel   string        `yaml:"channel" default:"herald_auth" doc:"the NOTIFY channel: payload '*' (or empty) drops every cached answer, 'user:<id>' a user's, 'channel:<name>' a channel's"`
}

// NamespaceSQLChecks are a namespace's SQL checks: queries called with the
// user ($1) and the channel ($2) that answer one boolean.
type NamespaceSQLChecks struct {
	SubscribeCheck string `yaml:"subscribe_check" doc:"a SQL query that decides this namespace's subscriptions, called with the user as '$1' and the channel as '$2', answering one boolean: '\"select app.can_subscribe($1, $2)\"'. 'true' allows, 'false' answers error 103, a failing query error 100. Cached for 'sql_auth.cache_ttl'; a client's subscription token is still checked by the token instead. Not together with 'subscribe_proxy'. See [postgres.md](postgres.md#authorization-in-sql)"`
	PublishCheck   string `yaml:"publish_check" doc:"the same for publications; not together with 'publish_proxy'"`
	RowCheck       string `yaml:"row_check" doc:"a SQL query that decides, per publication and user, whether the user's connections receive it (live, in recovery and in history), called with the user as '$1', the channel as '$2' and the publication's data as '$3' (text): '\"select app.can_see($1, $2, $3::jsonb)\"'. Run once per publication per distinct user subscribed on a node, cached for 'sql_auth.cache_ttl'; a failing query sends the publication to nobody. Herald's own (Centrifugo has none). See [postgres.md](postgres.md#row-checks)"`
}

// sqlChecks maps namespace names to their checks; empty when none has one.
func (c Config) sqlChecks() map[string]sqlauth.Checks {
	out := map[string]sqlauth.Checks{}
	add := func(name string, o NamespaceSQLChecks) {
		if o.SubscribeCheck != "" || o.PublishCheck != "" || o.RowCheck != "" {
			out[name] = sqlauth.Checks{Subscribe: o.SubscribeCheck, Publish: o.PublishCheck, Row: o.RowCheck}
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
		dsn = c.Engine.Postgres.DSNs()[0] // with shards, shard 0's database
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
		check(fmt.Sprintf("channel.namespaces[%d]", i), ns.Options())
	}
	if dsn, _ := c.sqlAuthDSNs(); dsn == "" && len(c.sqlChecks()) > 0 {
		bad("sql_auth.dsn", "required for subscribe_check and publish_check unless engine.type is postgres (then engine.postgres.dsn is used)")
	}
	if t := c.SQLAuth.Timeout; t < 0 || t > time.Minute {
		bad("sql_auth.timeout", "%s: want 0 (the default, %s) to 1m", t, sqlauth.DefaultTimeout)
	}
	return ps
}

// SQLAuthOptions converts the configuration for sqlauth.New; ok is false
// when no namespace has a check.
func (c Config) SQLAuthOptions() (opts sqlauth.Config, ok bool) {
	checks := c.sqlChecks()
	dsn, listen := c.sqlAuthDSNs()
	return sqlauth.Config{
		DSN: dsn, ListenDSN: listen, Namespaces: checks,
		CacheTTL: c.SQLAuth.CacheTTL, Timeout: c.SQLAuth.Timeout, Channel: c.SQLAuth.Channel,
		ChannelSyntax: c.Channel.ChannelSyntax,
	}, len(checks) > 0
}
