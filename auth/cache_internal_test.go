package auth

import (
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

const cacheTestSecret = "cache-test-secret-0123456789"

func cacheVerifier(t *testing.T, size int) *Verifier {
	t.Helper()
	v, err := NewVerifier(Config{HMACSecretKey: cacheTestSecret, ConnectTokenCacheSize: size})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func cacheToken(t *testing.T, claims jwt.MapClaims) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(cacheTestSecret))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// A cached token whose exp has passed is refused with ErrTokenExpired and
// dropped, though its signature was checked when it was still valid.
func TestCacheNeverServesAnExpiredToken(t *testing.T) {
	v := cacheVerifier(t, 10)
	exp := time.Now().Add(time.Hour)
	tok := cacheToken(t, jwt.MapClaims{"sub": "42", "exp": exp.Unix()})
	if _, err := v.VerifyConnectToken(tok); err != nil {
		t.Fatal(err)
	}
	if v.cache.len() != 1 {
		t.Fatalf("cache holds %d tokens, want 1", v.cache.len())
	}
	// The clock reaches exp: golang-jwt's rule is valid while now < exp.
	v.now = func() time.Time { return time.Unix(exp.Unix(), 0) }
	if _, err := v.VerifyConnectToken(tok); !errors.Is(err, ErrTokenExpired) {
		t.Fatalf("error = %v, want ErrTokenExpired", err)
	}
	if v.cache.len() != 0 {
		t.Fatalf("expired entry kept: cache holds %d tokens", v.cache.len())
	}
}

// Expired and invalid tokens are never stored.
func TestCacheStoresOnlyValidTokens(t *testing.T) {
	v := cacheVerifier(t, 10)
	bad := []string{
		cacheToken(t, jwt.MapClaims{"sub": "1", "exp": time.Now().Add(-time.Minute).Unix()}),
		cacheToken(t, jwt.MapClaims{"sub": "1", "nbf": time.Now().Add(time.Hour).Unix()}),
		cacheToken(t, jwt.MapClaims{"sub": "1", "channel": "news"}),
		"not.a.token",
	}
	for _, tok := range bad {
		if _, err := v.VerifyConnectToken(tok); err == nil {
			t.Fatalf("token %s accepted", tok)
		}
	}
	if v.cache.len() != 0 {
		t.Fatalf("cache holds %d refused tokens", v.cache.len())
	}
	// A token too long to be cached is still verified.
	long := cacheToken(t, jwt.MapClaims{"sub": "1", "info": map[string]string{"pad": string(make([]byte, maxCachedTokenLen))}})
	if _, err := v.VerifyConnectToken(long); err != nil {
		t.Fatal(err)
	}
	if v.cache.len() != 0 {
		t.Fatalf("a token of %d bytes was cached", len(long))
	}
}

// The cache never grows past its size.
func TestCacheIsBounded(t *testing.T) {
	v := cacheVerifier(t, 8)
	for i := range 100 {
		tok := cacheToken(t, jwt.MapClaims{"sub": strconv.Itoa(i)})
		ct, err := v.VerifyConnectToken(tok)
		if err != nil || ct.User != strconv.Itoa(i) {
			t.Fatalf("token %d: %+v, %v", i, ct, err)
		}
		if n := v.cache.len(); n > 8 {
			t.Fatalf("cache holds %d tokens, bound 8", n)
		}
	}
}

// Concurrent verifications of overlapping tokens, with evictions, each get
// their own token's claims (run with -race).
func TestCacheConcurrent(t *testing.T) {
	v := cacheVerifier(t, 4)
	toks := make([]string, 16)
	for i := range toks {
		toks[i] = cacheToken(t, jwt.MapClaims{"sub": strconv.Itoa(i), "info": map[string]int{"n": i}, "channels": []string{"c" + strconv.Itoa(i)}})
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for n := range 200 {
				i := (g + n) % len(toks)
				ct, err := v.VerifyConnectToken(toks[i])
				if err != nil {
					errs <- err
					return
				}
				if ct.User != strconv.Itoa(i) || ct.Channels[0] != "c"+strconv.Itoa(i) {
					errs <- errors.New("token " + strconv.Itoa(i) + " got the claims of user " + ct.User)
					return
				}
				ct.Channels[0] = "changed by a caller" // must not reach anyone else
				ct.Info[0] = 'X'
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
