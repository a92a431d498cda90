package config

// Centrifugo v6.9.1 dials the Sentinels with engine.redis.sentinel_tls
// alone, apart from the Redis servers' tls (internal/redisshard/init.go:98-104,
// shard.go:66): with sentinel_tls off they get no TLS even when the
// servers do. Herald's engine.redis.sentinel_tls says the same: its TLS
// keys for Sentinels of their own TLS, 'plain' for none (without either,
// a Herald file dials them as engine.redis.tls says).

// sentinelTLS maps an enabled engine.redis.sentinel_tls to Herald's, as
// tls is mapped; off, it is read by sentinelAddress (plainSentinels).
func sentinelTLS(m *cfMapper, c cfCtx, v any) { m.convertTLS(c, v, false) }

// plainSentinels writes engine.redis.sentinel_tls.plain for a Sentinel
// deployment whose servers take TLS and whose Sentinels, without an
// enabled sentinel_tls, do not. c is a key of the redis section.
func (m *cfMapper) plainSentinels(c cfCtx) {
	tls, _ := c.src["tls"].(map[string]any)
	st, _ := c.src["sentinel_tls"].(map[string]any)
	serversTLS, _ := isOn(tls["enabled"])
	sentinelsTLS, _ := isOn(st["enabled"])
	if serversTLS && !sentinelsTLS {
		setKey(m.out, "engine.redis.sentinel_tls.plain", true)
	}
}
