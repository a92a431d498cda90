package config

import (
	"github.com/heraldhq/herald/engine/nats"
	"github.com/heraldhq/herald/engine/postgres"
	"github.com/heraldhq/herald/engine/redis"
)

// EngineConfig selects the engine and holds each engine's settings: a
// field per engine whose options the file sets, under the engine's name
// (Engines lists the engines; an engine without options has no field).
// The fields are the engines' own option types, whose tags define the
// keys; the file adds what names the stores (addresses, shards) and the
// TLS files.
type EngineConfig struct {
	Type     string         `yaml:"type" default:"memory" doc:"'memory': one node, everything in process; 'postgres': a cluster on PostgreSQL alone (see [postgres.md](postgres.md)); 'redis'; 'nats' (delivery only, no history). See [engines.md](engines.md)"`
	Postgres PostgresConfig `yaml:"postgres"`
	Redis    RedisConfig    `yaml:"redis"`
	NATS     NATSConfig     `yaml:"nats"`
	// Presence names a second engine whose store keeps presence instead
	// of the one of type (Centrifugo's separate presence_manager).
	Presence string `yaml:"presence" doc:"'redis': presence is kept in the Redis server of 'engine.redis' while 'type' is the broker (publications, history, control, maps); empty: the engine of 'type' keeps presence itself. See 'Broker and presence apart' in [engines.md](engines.md)"`
}

// PostgresConfig is engine.postgres: the databases, and the PostgreSQL
// engine's options (postgres.Config), which every database's engine
// takes.
type PostgresConfig struct {
	DSN    string   `yaml:"dsn" defaultdoc:"required for 'postgres'" doc:"the database to publish to and read history and presence from, e.g. 'postgres://user:pass@host:5432/db'; may go through a transaction-mode pooler"`
	Shards []string `yaml:"shards" doc:"instead of 'dsn': several databases, each channel kept by one of them; every node lists the same ones in the same order, and the list is fixed for the cluster's data (see 'Sharding' in [engines.md](engines.md))"`
	// Config's own DSN and Shards (delivery goroutines) are not in the
	// file: the two above shadow them.
	postgres.Config `yaml:",inline"`
}

// RedisConfig is engine.redis: the deployments (standalone, Sentinel or
// Cluster, or several as shards), the TLS files, and the Redis engine's
// options (redis.Config), which every shard's engine takes.
type RedisConfig struct {
	Address   StringList `yaml:"address" defaultdoc:"'127.0.0.1:6379'" example:"[127.0.0.1:6379]" doc:"a standalone Redis server; a list of several is several shards, each channel kept by one of them (see 'Sharding' in [engines.md](engines.md)); not with 'addresses'"`
	Addresses []string   `yaml:"addresses" doc:"Sentinel or Cluster seed addresses, instead of 'address'"`
	// Config's own Addrs and TLS are not in the file: they are read
	// from the keys around it.
	redis.Config `yaml:",inline"`
	// TLS applies to every connection: the server, Sentinels and Cluster
	// nodes.
	TLS ClientTLS `yaml:"tls"`
	// SentinelTLS: the Sentinels' TLS when not the servers' (sentineltls.go).
	SentinelTLS SentinelTLSConfig `yaml:"sentinel_tls"`
	// Shards is Herald's own shape (Centrifugo lists Sentinel shards in
	// sentinel_address, one shared master name; the importer converts).
	Shards []RedisShardConfig `yaml:"shards" doc:"instead of 'address'/'addresses': several Redis deployments, each channel kept by one of them; each item is a standalone server ('address') or a Sentinel set ('addresses' and 'sentinel_master'), with its own 'db'; the other keys of engine.redis apply to every shard. Every node lists the same shards in the same order (see 'Sharding' in [engines.md](engines.md))"`
}

// RedisShardConfig is one item of engine.redis.shards: one standalone
// server or one master behind Sentinels.
type RedisShardConfig struct {
	Address        string   `yaml:"address" doc:"a standalone Redis server, 'host:port'; not with 'addresses'"`
	Addresses      []string `yaml:"addresses" doc:"the Sentinels of this shard's master, 'host:port' each; with 'sentinel_master'"`
	SentinelMaster string   `yaml:"sentinel_master" doc:"the name the Sentinels at 'addresses' know this shard's master by"`
	DB             int      `yaml:"db" doc:"this shard's database number"`
}

// RedisShard is one shard's deployment, as the Redis engine takes it:
// Addrs are a standalone server's address, or Sentinels when
// SentinelMaster is set.
type RedisShard struct {
	Addrs          []string
	SentinelMaster string
	DB             int
}

// NATSConfig is engine.nats: the NATS engine's options (nats.Config),
// where presence is kept, and the TLS files.
type NATSConfig struct {
	nats.Config `yaml:",inline"`
	Presence    string    `yaml:"presence" default:"none" doc:"'redis' keeps presence in the Redis server of 'engine.redis'; with 'none', namespaces cannot turn presence on"`
	TLS         ClientTLS `yaml:"tls"`
}

// Addrs are the addresses of the first (or only) shard: addresses, else
// the first of address.
func (r RedisConfig) Addrs() []string {
	if len(r.Addresses) > 0 {
		return r.Addresses
	}
	if len(r.Address) > 0 && r.Address[0] != "" {
		return []string{r.Address[0]}
	}
	return []string{"127.0.0.1:6379"}
}

// RedisShards are the deployments of each shard: the items of shards;
// else one per entry of address when there are several; else the one that
// Addrs, sentinel_master and db name.
func (r RedisConfig) RedisShards() []RedisShard {
	if len(r.Shards) > 0 {
		out := make([]RedisShard, len(r.Shards))
		for i, s := range r.Shards {
			out[i] = RedisShard{Addrs: s.Addresses, SentinelMaster: s.SentinelMaster, DB: s.DB}
			if len(s.Addresses) == 0 {
				out[i].Addrs = []string{s.Address}
			}
		}
		return out
	}
	if len(r.Addresses) == 0 && len(r.Address) > 1 {
		out := make([]RedisShard, len(r.Address))
		for i, a := range r.Address {
			out[i] = RedisShard{Addrs: []string{a}, DB: r.DB}
		}
		return out
	}
	return []RedisShard{{Addrs: r.Addrs(), SentinelMaster: r.SentinelMaster, DB: r.DB}}
}

// DSNs are the PostgreSQL shards' DSNs: shards, else the one dsn.
func (p PostgresConfig) DSNs() []string {
	if len(p.Shards) > 0 {
		return p.Shards
	}
	return []string{p.DSN}
}
