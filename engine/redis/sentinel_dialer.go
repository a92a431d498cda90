package redis

import (
	"context"
	"crypto/tls"
	"net"
	"slices"
	"time"
)

// go-redis v9 dials the Sentinels of a failover client with the TLS of
// its servers (FailoverOptions.TLSConfig: sentinel.go, sentinelOptions
// and masterReplicaDialer, v9.23.0) and has no TLS of their own for them.
// Centrifugo v6.9.1 dials them with its sentinel_tls alone
// (internal/redisshard/shard.go:66), so with Config.SeparateSentinelTLS
// the client gets a Dialer, which go-redis uses for every connection,
// Sentinels and servers alike, and which picks the TLS by the address it
// dials: a Sentinel's gets SentinelTLS, a server's TLS.

// dialTimeout is go-redis's default DialTimeout, which its own dialer
// would use.
const dialTimeout = 5 * time.Second

// sentinelDialer is the Dialer of a Sentinel client whose Sentinels take
// SentinelTLS; nil otherwise (go-redis's own dialer, TLS for all).
func (o Config) sentinelDialer() func(ctx context.Context, network, addr string) (net.Conn, error) {
	if o.SentinelMaster == "" || !o.SeparateSentinelTLS {
		return nil
	}
	sentinels := slices.Clone(o.Addrs)
	serverTLS, sentinelTLS := o.TLS, o.SentinelTLS
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		cfg := serverTLS
		if isSentinel(ctx, sentinels, addr) {
			cfg = sentinelTLS
		}
		d := &net.Dialer{Timeout: dialTimeout}
		if cfg == nil {
			return d.DialContext(ctx, network, addr)
		}
		return (&tls.Dialer{NetDialer: d, Config: cfg}).DialContext(ctx, network, addr)
	}
}

// isSentinel reports whether addr is one of the configured Sentinels:
// the same host:port, or the IP address and port a configured host name
// resolves to. go-redis also dials the Sentinels other Sentinels report
// (SENTINEL SENTINELS, by IP address); one that is not configured is
// taken for a server, so list every Sentinel of the set.
func isSentinel(ctx context.Context, sentinels []string, addr string) bool {
	if slices.Contains(sentinels, addr) {
		return true
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || net.ParseIP(host) == nil {
		return false
	}
	for _, s := range sentinels {
		sh, sp, err := net.SplitHostPort(s)
		if err != nil || sp != port || net.ParseIP(sh) != nil {
			continue
		}
		ips, err := net.DefaultResolver.LookupHost(ctx, sh)
		if err == nil && slices.ContainsFunc(ips, func(ip string) bool { return net.ParseIP(ip).Equal(net.ParseIP(host)) }) {
			return true
		}
	}
	return false
}
