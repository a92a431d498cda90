package server

// TokenCacheConfig is the part of client.token that shapes how connection
// tokens are verified, apart from the keys.
type TokenCacheConfig struct {
	// CacheSize is how many verified connection tokens are remembered until
	// they expire, so that a client reconnecting with the same token skips
	// the signature check (10000; 0 turns the cache off). Tokens longer
	// than 2 KiB are never cached, which bounds the memory.
	CacheSize int `yaml:"cache_size"`
}

// DefaultTokenCacheSize is client.token.cache_size's default: a few MiB
// with tokens of usual size.
const DefaultTokenCacheSize = 10000

func (t TokenCacheConfig) validate(bad func(key, format string, args ...any)) {
	if t.CacheSize < 0 {
		bad("client.token.cache_size", "%d: want a number of tokens, or 0 to turn the cache off", t.CacheSize)
	}
}

// WebSocketAcceptConfig is the part of websocket that shapes the upgrade.
type WebSocketAcceptConfig struct {
	// NetHTTPUpgrade lets net/http read WebSocket upgrade requests, as it
	// reads every other request, instead of the accept loop with pooled
	// buffers (false). The handling after the request is read is the same.
	NetHTTPUpgrade bool `yaml:"net_http_upgrade"`
}
