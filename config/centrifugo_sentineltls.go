package config

import "fmt"

// sentinelTLS maps engine.redis.sentinel_tls (Centrifugo 6.9.1
// internal/redisshard/init.go: the TLS of the connections to the
// Sentinels, apart from the Redis servers'). Herald's Redis client,
// go-redis v9, dials the Sentinels with the TLS configuration of the
// servers (FailoverOptions.TLSConfig, sentinel.go sentinelOptions), which
// is engine.redis.tls: a sentinel_tls that is the same object as tls
// means what it means in Centrifugo and is taken; another is refused.
// Off, it is taken as before (the Sentinels are dialed as tls says).
func sentinelTLS(m *cfMapper, c cfCtx, v any) {
	st := m.enabledObject(c, v, "want a TLS object: {enabled: true, server_ca_pem: FILE, ...}")
	if st == nil {
		return
	}
	tls, _ := c.src["tls"].(map[string]any)
	if on, _ := isOn(tls["enabled"]); !on || !sameTLSObject(st, tls) {
		m.refuse(c.path, "Herald dials the Sentinels with engine.redis.tls, the TLS of the Redis servers (one TLS configuration in its Redis client): set tls to the same object, or remove sentinel_tls if the Sentinels take the servers' TLS")
	}
}

// sameTLSObject reports whether two enabled Centrifugo TLS objects have
// the same keys and values, whatever form 'enabled' is written in (the
// environment gives strings).
func sameTLSObject(a, b map[string]any) bool {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	delete(keys, "enabled")
	for k := range keys {
		if fmt.Sprint(a[k]) != fmt.Sprint(b[k]) {
			return false
		}
	}
	return true
}
