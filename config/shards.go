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
		if key, from := e.presenceFrom(e.Type); from == "redis" {
			bad("engine.redis.address", "%s: redis keeps presence in one Redis server; list one address", key)
		}
		listProblems("engine.redis.address", r.Address, bad)
	}
	if len(r.Shards) > 0 {
		_, from := e.presenceFrom(e.Type)
		r.shardListProblems(from == "redis", bad)
	}
}

// shardListProblems checks engine.redis.shards: each item one standalone
// server or one Sentinel-watched master, no two the same, and none of the
// keys that name one deployment beside the list.
func (r RedisConfig) shardListProblems(natsPresence bool, bad func(key, format string, args ...any)) {
	const key = "engine.redis.shards"
	if len(r.Address) > 0 {
		bad("engine.redis.address", "not with shards: list a standalone server as a shard's address")
	}
	if len(r.Addresses) > 0 {
		bad("engine.redis.addresses", "not with shards: list each shard's Sentinels in its own addresses")
	}
	if r.SentinelMaster != "" {
		bad("engine.redis.sentinel_master", "not with shards: name each shard's master in its own sentinel_master")
	}
	if r.DB != 0 {
		bad("engine.redis.db", "not with shards: set each shard's db")
	}
	if r.Cluster {
		bad("engine.redis.cluster", "not with shards: a shard is a standalone server or a Sentinel set")
	}
	if natsPresence {
		bad(key, "engine.nats.presence: redis keeps presence in one Redis deployment: use address or addresses")
	}
	// A Sentinel set may watch several masters, so a Sentinel is the same
	// store twice only under the same master name.
	seen := map[string]int{}
	same := func(i int, id string) {
		if j, ok := seen[id]; ok && j != i {
			bad(fmt.Sprintf("%s[%d]", key, i), "the same deployment as %s[%d]: each shard must be a store of its own", key, j)
		} else {
			seen[id] = i
		}
	}
	for i, s := range r.Shards {
		k := fmt.Sprintf("%s[%d]", key, i)
		if s.DB < 0 {
			bad(k+".db", "%d: must not be negative", s.DB)
		}
		switch {
		case s.Address != "" && len(s.Addresses) > 0:
			bad(k+".address", "not with addresses: a shard is a standalone server (address) or a Sentinel set (addresses and sentinel_master)")
		case s.Address != "":
			if s.SentinelMaster != "" {
				bad(k+".sentinel_master", "only with addresses (the Sentinels); address is a standalone server")
			}
			same(i, s.Address)
		case len(s.Addresses) > 0:
			if s.SentinelMaster == "" {
				bad(k+".sentinel_master", "required with addresses: the name the Sentinels know this shard's master by (Redis Cluster shards are not supported)")
			}
			for j, a := range s.Addresses {
				if a == "" {
					bad(fmt.Sprintf("%s.addresses[%d]", k, j), "empty")
					continue
				}
				same(i, a+" "+s.SentinelMaster)
			}
		default:
			bad(k, "set address (a standalone server) or addresses and sentinel_master (a Sentinel set)")
		}
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
