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
