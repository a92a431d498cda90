package config

import "time"

// EngineConfig selects the engine and holds each engine's settings.
type EngineConfig struct {
	Type     string         `yaml:"type" default:"memory" doc:"'memory': one node, everything in process; 'postgres': a cluster on PostgreSQL alone (see [postgres.md](postgres.md)); 'redis'; 'nats' (delivery only, no history). See [engines.md](engines.md)"`
	Postgres PostgresConfig `yaml:"postgres"`
	Redis    RedisConfig    `yaml:"redis"`
	NATS     NATSConfig     `yaml:"nats"`
}

// PostgresConfig connects the PostgreSQL engine (postgres.Config).
type PostgresConfig struct {
	DSN                  string        `yaml:"dsn" defaultdoc:"required for 'postgres'" doc:"the database to publish to and read history and presence from, e.g. 'postgres://user:pass@host:5432/db'; may go through a transaction-mode pooler"`
	Shards               []string      `yaml:"shards" doc:"instead of 'dsn': several databases, each channel kept by one of them; every node lists the same ones in the same order, and the list is fixed for the cluster's data (see 'Sharding' in [engines.md](engines.md))"`
	ListenDSN            string        `yaml:"listen_dsn" defaultdoc:"'dsn'" doc:"a direct session connection for the node's one LISTEN connection, when 'dsn' goes through a transaction-mode pooler"`
	Schema               string        `yaml:"schema" default:"herald" doc:"the schema of Herald's tables and functions"`
	PoolSize             int           `yaml:"pool_size" default:"2" doc:"publishing connections per node (batches grow with fewer)"`
	QueryPoolSize        int           `yaml:"query_pool_size" default:"4" doc:"history and presence read connections per node"`
	SynchronousCommitOff bool          `yaml:"synchronous_commit_off" doc:"publish with 'synchronous_commit = off': more throughput, but a database crash may lose the last few milliseconds of publications"`
	SkipMigrate          bool          `yaml:"skip_migrate" doc:"do not create or migrate the schema on start; run 'herald migrate' (or apply 'herald migrate --sql') yourself"`
	ListenerPing         time.Duration `yaml:"listener_ping" default:"5s" doc:"a quiet listening connection is pinged after this long and given as long again to answer, so one that died silently (no reset) is noticed within twice this"`
	WriteTimeout         time.Duration `yaml:"write_timeout" default:"10s" doc:"bounds one publishing transaction (a publish call waits at most twice this), each read made for delivery and each listener reconnect attempt; also the server-side 'idle_in_transaction_session_timeout' of publishing transactions"`
	// Logical is Herald's own (Centrifugo has no table streams).
	Logical PostgresLogicalConfig `yaml:"logical"`
}

// PostgresLogicalConfig runs the consumer of the tables streamed with
// stream_table(..., mode => 'logical') (postgres.LogicalConfig).
type PostgresLogicalConfig struct {
	Enabled          bool          `yaml:"enabled" doc:"consume the replication slot that feeds the tables streamed in logical mode (one node at a time does; the others take over when it stops). Needs 'wal_level = logical' and a user with the REPLICATION attribute. See [postgres.md](postgres.md#logical-replication-streams)"`
	DSN              string        `yaml:"dsn" defaultdoc:"'listen_dsn', else 'dsn'" doc:"a direct connection (not a transaction-mode pooler) for the replication connection and the slot's ownership lock"`
	Slot             string        `yaml:"slot" defaultdoc:"'<schema>_streams'" doc:"the replication slot's name"`
	MaxRetainedBytes int64         `yaml:"max_retained_bytes" default:"1073741824" doc:"the most WAL the slot may hold back (1 GiB); past it the slot is dropped with an error log and 'herald_postgres_logical_slot_dropped_total', losing the changes it held, so the disk never fills"`
	CheckInterval    time.Duration `yaml:"check_interval" default:"5s" doc:"how often the owner reads the slot's lag and the other nodes try to take the slot over"`
}

// RedisConfig connects the Redis engine: standalone, Sentinel or Cluster
// (redis.Config).
type RedisConfig struct {
	Address          StringList    `yaml:"address" defaultdoc:"'127.0.0.1:6379'" example:"[127.0.0.1:6379]" doc:"a standalone Redis server; a list of several is several shards, each channel kept by one of them (see 'Sharding' in [engines.md](engines.md)); not with 'addresses'"`
	Addresses        []string      `yaml:"addresses" doc:"Sentinel or Cluster seed addresses, instead of 'address'"`
	SentinelMaster   string        `yaml:"sentinel_master" doc:"the Sentinel master name; with 'addresses', Herald follows failovers"`
	SentinelUsername string        `yaml:"sentinel_username" doc:"Sentinel credentials: the user name"`
	SentinelPassword string        `yaml:"sentinel_password" doc:"Sentinel credentials: the password"`
	Cluster          bool          `yaml:"cluster" doc:"'addresses' are a Redis Cluster"`
	Username         string        `yaml:"username" doc:"Redis ACL credentials: the user name"`
	Password         string        `yaml:"password" doc:"Redis ACL credentials: the password"`
	DB               int           `yaml:"db" doc:"database number (standalone and Sentinel)"`
	Prefix           string        `yaml:"prefix" default:"herald" doc:"starts every key and pub/sub channel, so several Herald clusters can share a server"`
	PubSubShards     int           `yaml:"pubsub_shards" default:"4" doc:"connections that a node's channel subscriptions are spread over"`
	PoolSize         int           `yaml:"pool_size" defaultdoc:"go-redis default" doc:"command connections per node (0: the go-redis default)"`
	MinReplicas      int           `yaml:"min_replicas" doc:"with 1 or more, a publication with history is acknowledged (and sent to subscribers) only once that many replicas have it, so a Sentinel failover cannot lose it; otherwise the publish fails. Not with Redis Cluster ([engines.md](engines.md))"`
	ReplicaTimeout   time.Duration `yaml:"replica_timeout" default:"1s" doc:"how long a publication waits for 'min_replicas'"`
	// TLS applies to every connection: the server, Sentinels and Cluster
	// nodes.
	TLS ClientTLS `yaml:"tls"`
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

// NATSConfig connects the NATS engine, which carries publications between
// nodes but keeps no history (nats.Config).
type NATSConfig struct {
	URL      string    `yaml:"url" default:"nats://127.0.0.1:4222" doc:"the NATS server"`
	Prefix   string    `yaml:"prefix" default:"herald" doc:"starts every subject"`
	Presence string    `yaml:"presence" default:"none" doc:"'redis' keeps presence in the Redis server of 'engine.redis'; with 'none', namespaces cannot turn presence on"`
	TLS      ClientTLS `yaml:"tls"`
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

// engines lists the engines and what each keeps.
var engines = map[string]struct{ history, presence, maps bool }{
	"memory":   {history: true, presence: true, maps: true},
	"postgres": {history: true, presence: true, maps: true},
	"redis":    {history: true, presence: true, maps: true},
	"nats":     {history: false, presence: false},
}

// engineCaps returns what the configured engine keeps.
func (c Config) engineCaps() (history, presence, ok bool) {
	e, ok := engines[c.Engine.Type]
	presence = e.presence || (c.Engine.Type == "nats" && c.Engine.NATS.Presence == "redis")
	return e.history, presence, ok
}
