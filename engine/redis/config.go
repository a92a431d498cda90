package redis

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Defaults used for zero fields of Config.
const (
	DefaultPrefix = "herald"
	// DefaultPubSubShards is the number of subscribing connections a node
	// holds. Channels are spread over them by hash, so one busy channel or
	// one slow reconnect stalls only its share of the channels.
	DefaultPubSubShards = 4
	// DefaultHistoryMetaTTL is how long a stream's position outlives its
	// last publication or read, as in Centrifugo.
	DefaultHistoryMetaTTL = 30 * 24 * time.Hour
	// DefaultHealthInterval is how long a subscribing connection may stay
	// silent before the engine pings it; one that stays silent for three
	// intervals after a ping is replaced.
	DefaultHealthInterval = 2 * time.Second
	// DefaultMapExpiryInterval is Config.MapExpiryInterval's default.
	DefaultMapExpiryInterval = 100 * time.Millisecond
	// DefaultReadTimeout bounds each background read (gap repair, replay)
	// before it is retried.
	DefaultReadTimeout  = 10 * time.Second
	DefaultReconnectMin = 50 * time.Millisecond
	// DefaultReconnectMax is short for the reason the PostgreSQL
	// engine's is: the time away after the server returns is repaired
	// from history or, without it, missed.
	DefaultReconnectMax = time.Second
	// DefaultReplayBatch is the most publications one replay read returns.
	DefaultReplayBatch = 1000
	// DefaultReplicaTimeout bounds the wait for replicas when MinReplicas
	// is set.
	DefaultReplicaTimeout = time.Second
)

// Config configures an Engine (and a standalone Presence).
//
// Addrs and SentinelMaster choose the deployment: one address is a
// standalone server; SentinelMaster set makes Addrs the Sentinels of that
// master; Cluster (or more than one address without SentinelMaster) makes
// Addrs the seed nodes of a Redis Cluster.
//
// It is also the engine.redis section of Herald's configuration file: the
// yaml, default and doc tags are that file's keys, defaults (which
// withDefaults applies to zero fields, as a test checks) and
// documentation; fields tagged yaml:"-" are not in the file, set by the
// program (the file's addresses, shards and TLS files are read into
// Addrs and TLS) or left to their defaults.
type Config struct {
	// Addrs lists host:port addresses. Required.
	Addrs []string `yaml:"-"`
	// SentinelMaster is the name of the master the Sentinels at Addrs
	// watch; empty means no Sentinel.
	SentinelMaster string `yaml:"sentinel_master" doc:"the Sentinel master name; with 'addresses', Herald follows failovers"`
	// SentinelUsername and SentinelPassword authenticate to the Sentinels
	// when they need it.
	SentinelUsername string `yaml:"sentinel_username" doc:"Sentinel credentials: the user name"`
	SentinelPassword string `yaml:"sentinel_password" doc:"Sentinel credentials: the password"`
	// Cluster forces Redis Cluster mode with a single seed address.
	Cluster bool `yaml:"cluster" doc:"'addresses' are a Redis Cluster"`
	// Username and Password authenticate to Redis (ACL user or
	// requirepass).
	Username string `yaml:"username" doc:"Redis ACL credentials: the user name"`
	Password string `yaml:"password" doc:"Redis ACL credentials: the password"`
	// DB selects the database of a standalone or Sentinel-managed server;
	// Redis Cluster has only database 0.
	DB int `yaml:"db" doc:"database number (standalone and Sentinel)"`
	// TLS, when set, dials with TLS.
	TLS *tls.Config `yaml:"-"`
	// SeparateSentinelTLS dials the Sentinels with SentinelTLS (nil:
	// without TLS) instead of TLS (sentinel_dialer.go).
	SeparateSentinelTLS bool        `yaml:"-"`
	SentinelTLS         *tls.Config `yaml:"-"`

	// Prefix starts every key and pub/sub channel the engine uses, so
	// several Herald clusters (or tests) can share one Redis. It may hold
	// letters, digits and "_.:-".
	Prefix string `yaml:"prefix" default:"herald" doc:"starts every key and pub/sub channel, so several Herald clusters can share a server"`
	// NodeID is this node's id (engine.Broker.NodeID): the address of its
	// own control channel, and its connection name in CLIENT LIST
	// ("herald:<NodeID>"); empty means a random id.
	NodeID string `yaml:"-"`
	// PubSubShards is the number of subscribing connections.
	PubSubShards int `yaml:"pubsub_shards" default:"4" doc:"connections that a node's channel subscriptions are spread over"`
	// PoolSize is the number of command connections; zero keeps
	// go-redis's default (10 per GOMAXPROCS). The subscribing connections
	// come on top.
	PoolSize int `yaml:"pool_size" defaultdoc:"go-redis default" doc:"command connections per node (0: the go-redis default)"`

	// MinReplicas, when positive, makes Publish with history wait (WAIT)
	// until that many replicas have the publication, at most
	// ReplicaTimeout, and fail with ErrNotReplicated when fewer confirm:
	// an acknowledged publication then survives the promotion of a
	// replica. Redis replicates asynchronously, so without it a failover
	// can lose the last publications the old master acknowledged. Not
	// with Redis Cluster, where WAIT cannot follow a script to its master.
	MinReplicas    int           `yaml:"min_replicas" doc:"with 1 or more, a publication with history is acknowledged (and sent to subscribers) only once that many replicas have it, so a Sentinel failover cannot lose it; otherwise the publish fails. Not with Redis Cluster ([engines.md](engines.md))"`
	ReplicaTimeout time.Duration `yaml:"replica_timeout" default:"1s" doc:"how long a publication waits for 'min_replicas'"`

	HistoryMetaTTL time.Duration `yaml:"-"`
	HealthInterval time.Duration `yaml:"-"`
	// MapExpiryInterval is how often the node removes map keys whose TTL
	// passed (engine.MapPublishOptions.KeyTTL); zero means
	// DefaultMapExpiryInterval.
	MapExpiryInterval time.Duration `yaml:"-"`
	ReadTimeout       time.Duration `yaml:"-"`
	ReconnectMin      time.Duration `yaml:"-"`
	ReconnectMax      time.Duration `yaml:"-"`
	ReplayBatch       int           `yaml:"-"`

	// Logger receives warnings (reconnects, publications that history no
	// longer held when a gap was repaired); nil means slog.Default().
	Logger *slog.Logger `yaml:"-"`
}

var prefixPattern = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)

func (o Config) withDefaults() (Config, error) {
	if len(o.Addrs) == 0 {
		return o, errors.New("redis engine: at least one address is required")
	}
	if o.SentinelMaster != "" && o.Cluster {
		return o, errors.New("redis engine: Sentinel and Cluster exclude each other")
	}
	if o.MinReplicas > 0 && (o.Cluster || len(o.Addrs) > 1 && o.SentinelMaster == "") {
		return o, errors.New("redis engine: MinReplicas is not supported with Redis Cluster")
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	// Braces would change which part of a key Redis Cluster hashes, and
	// glob characters would break the key scans of operators and tests.
	if !prefixPattern.MatchString(o.Prefix) {
		return o, fmt.Errorf("redis engine: prefix %q: want 1-64 letters, digits or \"_.:-\"", o.Prefix)
	}
	if o.NodeID == "" {
		o.NodeID = randomToken(8)
	}
	// The id becomes part of the connection name, which CLIENT SETNAME
	// restricts.
	if !prefixPattern.MatchString(o.NodeID) {
		return o, fmt.Errorf("redis engine: node id %q: want 1-64 letters, digits or \"_.:-\"", o.NodeID)
	}
	setInt(&o.PubSubShards, DefaultPubSubShards)
	setInt(&o.ReplayBatch, DefaultReplayBatch)
	setDur(&o.HistoryMetaTTL, DefaultHistoryMetaTTL)
	setDur(&o.HealthInterval, DefaultHealthInterval)
	setDur(&o.MapExpiryInterval, DefaultMapExpiryInterval)
	setDur(&o.ReadTimeout, DefaultReadTimeout)
	setDur(&o.ReconnectMin, DefaultReconnectMin)
	setDur(&o.ReconnectMax, DefaultReconnectMax)
	setDur(&o.ReplicaTimeout, DefaultReplicaTimeout)
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o, nil
}

// newClient builds the go-redis client the options describe. RESP2 is
// asked for because pub/sub replies then keep their classic shape, which
// the subscribing connections rely on to see (re)subscriptions.
func (o Config) newClient() goredis.UniversalClient {
	return goredis.NewUniversalClient(o.universalOptions())
}

// universalOptions are the go-redis options of o.
func (o Config) universalOptions() *goredis.UniversalOptions {
	return &goredis.UniversalOptions{
		Addrs:            o.Addrs,
		MasterName:       o.SentinelMaster,
		SentinelUsername: o.SentinelUsername,
		SentinelPassword: o.SentinelPassword,
		IsClusterMode:    o.Cluster,
		Username:         o.Username,
		Password:         o.Password,
		DB:               o.DB,
		TLSConfig:        o.TLS,
		PoolSize:         o.PoolSize,
		ClientName:       connectionName(o.NodeID),
		Protocol:         2,
		// Callers' deadlines then bound network waits too.
		ContextTimeoutEnabled: true,
		// go-redis would otherwise send a command again, on a new
		// connection, after a read timeout or a broken connection. For a
		// publish script whose reply was lost (a network that went silent,
		// a connection cut after Redis ran it) that stores the publication
		// twice, with two offsets, and reports success: every subscriber
		// gets it twice. Without retries the caller gets the error and
		// decides; the engine's background loops retry on their own.
		MaxRetries: -1,
		Dialer:     o.sentinelDialer(),
	}
}

// connect fills in the defaults of o and returns them with a client that
// answered a ping; who starts the ping error.
func (o Config) connect(ctx context.Context, who string) (Config, goredis.UniversalClient, error) {
	o, err := o.withDefaults()
	if err != nil {
		return o, nil, err
	}
	client := o.newClient()
	if err := client.Ping(ctx).Err(); err != nil {
		_ = client.Close()
		return o, nil, fmt.Errorf("%s: ping %v: %w", who, o.Addrs, err)
	}
	return o, client, nil
}

// isCluster reports whether c is a Redis Cluster client, which
// goredis.NewUniversalClient makes for Config.Cluster or for several
// addresses without SentinelMaster.
func isCluster(c goredis.UniversalClient) bool {
	_, ok := c.(*goredis.ClusterClient)
	return ok
}

// connectionName is what CLIENT LIST shows for every connection of a node.
func connectionName(nodeID string) string { return "herald:" + nodeID }

func setInt(v *int, def int) {
	if *v <= 0 {
		*v = def
	}
}

func setDur(v *time.Duration, def time.Duration) {
	if *v <= 0 {
		*v = def
	}
}
