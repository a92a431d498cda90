package auth_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
)

// The connection-token cache pays when the same token comes back (a client
// reconnecting); a fresh token per connection only adds a hash and an
// insert to the full verification. Both are measured, against
// BenchmarkVerifyConnectTokenHS256 and ...RS256 without a cache.

const benchCacheSize = 10000

func BenchmarkVerifyConnectTokenCachedHS256(b *testing.B) {
	tok, err := hmacSigner(b).ConnectToken(auth.ConnectClaims{User: "1234567", ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		b.Fatal(err)
	}
	benchConnect(b, newVerifier(b, auth.Config{HMACSecretKey: testSecret, ConnectTokenCacheSize: benchCacheSize}), tok)
}

func BenchmarkVerifyConnectTokenCachedRS256(b *testing.B) {
	rk := newRSAKey(b)
	s, err := auth.NewSigner("RS256", rk.privPEM)
	if err != nil {
		b.Fatal(err)
	}
	tok, err := s.ConnectToken(auth.ConnectClaims{User: "1234567", ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		b.Fatal(err)
	}
	benchConnect(b, newVerifier(b, auth.Config{RSAPublicKey: rk.pubPEM, ConnectTokenCacheSize: benchCacheSize}), tok)
}

func BenchmarkVerifyConnectTokenCachedHS256Parallel(b *testing.B) {
	tok, err := hmacSigner(b).ConnectToken(auth.ConnectClaims{User: "1234567", ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		b.Fatal(err)
	}
	v := newVerifier(b, auth.Config{HMACSecretKey: testSecret, ConnectTokenCacheSize: benchCacheSize})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := v.VerifyConnectToken(tok); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// freshTokens are distinct tokens, twice as many as the cache holds, so a
// pass over them misses on every token and evicts for the second half.
func freshTokens(b *testing.B) []string {
	b.Helper()
	s := hmacSigner(b)
	toks := make([]string, 2*benchCacheSize)
	for i := range toks {
		t, err := s.ConnectToken(auth.ConnectClaims{User: strconv.Itoa(1000000 + i), ExpiresAt: time.Now().Add(time.Hour)})
		if err != nil {
			b.Fatal(err)
		}
		toks[i] = t
	}
	return toks
}

// benchFresh verifies every token once per Verifier: with a cache, each is
// a miss.
func benchFresh(b *testing.B, cacheSize int) {
	toks := freshTokens(b)
	cfg := auth.Config{HMACSecretKey: testSecret, ConnectTokenCacheSize: cacheSize}
	v := newVerifier(b, cfg)
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		if i == len(toks) {
			i = 0
			b.StopTimer()
			v = newVerifier(b, cfg)
			b.StartTimer()
		}
		if _, err := v.VerifyConnectToken(toks[i]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkVerifyConnectTokenFreshHS256(b *testing.B)       { benchFresh(b, 0) }
func BenchmarkVerifyConnectTokenFreshCachedHS256(b *testing.B) { benchFresh(b, benchCacheSize) }
