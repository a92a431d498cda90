package config

import "fmt"

// shardProblems checks the shard lists of the PostgreSQL and Redis
// engines: the entries must be distinct and not empty (a repeated one
// would be two shards on one store, a mistake placement cannot survive),
// and a list excludes the keys that name one store.
func (e EngineConfig) shardProblems(bad func(key, format string, args ...any)) {
	p := e.Postgres
	if len(p.Shards) > 0 {
		if p.DSN != "" {
			bad("engine.postgres.shards", "set either dsn (one database) or shards (several), not both")
		}
		if p.ListenDSN != "" {
			bad("engine.postgres.listen_dsn", "not with shards: each shard's DSN is also its listening connection's")
		}
		if p.Logical.DSN != "" {
			bad("engine.postgres.logical.dsn", "not with shards: each shard's stream tables are read through a replication connection to that shard's DSN")
		}
		listProblems("engine.postgres.shards", p.Shards, bad)
	}
	r := e.Redis
	if len(r.Address) > 1 {
		if len(r.Addresses) > 0 {
			bad("engine.redis.address", "several addresses are shards of standalone servers: not with addresses (Sentinel or Cluster)")
		}
		if e.Type == "nats" && e.NATS.Presence == "redis" {
			bad("engine.redis.address", "engine.nats.presence: redis keeps presence in one Redis server; list one address")
		}
		listProblems("engine.redis.address", r.Address, bad)
	}
}

func listProblems(key string, items []string, bad func(key, format string, args ...any)) {
	seen := map[string]int{}
	for i, s := range items {
		k := fmt.Sprintf("%s[%d]", key, i)
		if s == "" {
			bad(k, "empty")
			continue
		}
		if j, ok := seen[s]; ok {
			bad(k, "the same as %s[%d]: each shard must be a store of its own", key, j)
		}
		seen[s] = i
	}
}
