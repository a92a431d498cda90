package config

import (
	"crypto/tls"
	"fmt"
)

// SentinelTLSConfig is engine.redis.sentinel_tls: how the Sentinels of a
// Sentinel deployment are dialed when it is not as the Redis servers are
// (engine.redis.tls, Herald's default). Centrifugo v6.9.1 dials its
// Sentinels with sentinel_tls alone (internal/redisshard/init.go:98-104,
// shard.go:66): without it they get no TLS even when the servers do, which
// the importer writes as plain.
type SentinelTLSConfig struct {
	ClientTLS `yaml:",inline"`
	Plain     bool `yaml:"plain" doc:"dial the Sentinels without TLS even when 'engine.redis.tls' is on (Centrifugo's behaviour when its 'sentinel_tls' is off); with 'enabled' and the keys beside it instead, the Sentinels get a TLS of their own. Neither: the Sentinels are dialed as 'engine.redis.tls' says"`
}

// separate reports whether the Sentinels are dialed otherwise than the
// servers, and with what TLS then (nil: none).
func (s SentinelTLSConfig) separate() (bool, *tls.Config, error) {
	if !s.Enabled {
		return s.Plain, nil, nil
	}
	c, err := s.ClientTLS.Config()
	if err != nil {
		return false, nil, fmt.Errorf("engine.redis.sentinel_tls: %w", err)
	}
	return true, c, nil
}

// problems are those of the section's files, and plain with TLS on.
func (s SentinelTLSConfig) problems() Problems {
	ps := clientTLSProblems("engine.redis.sentinel_tls", s.ClientTLS.Validate())
	if s.Plain && s.Enabled {
		ps = append(ps, Problem{Key: "engine.redis.sentinel_tls.plain", Message: "not with enabled: the Sentinels are dialed either without TLS or with the TLS of this section"})
	}
	return ps
}
