package auth_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/internal/test/testenv"
)

func claims(sub string) map[string]any {
	return map[string]any{"sub": sub, "exp": inAnHour()}
}

// TestJWKSRotation: tokens of the provider's first key verify; after the
// provider adds a second key, a token naming it makes exactly one fetch
// and verifies, and tokens of the first key keep verifying from the cache
// without a fetch.
func TestJWKSRotation(t *testing.T) {
	k1 := newIdPKey(t, "2026-01", jose.RS256)
	k2 := newIdPKey(t, "2026-02", jose.ES256)
	srv := newJWKSServer(t, k1)
	v := newVerifier(t, auth.Config{JWKS: srv.config("client.token")})
	clk := newClock(v)

	tok, err := v.VerifyConnectToken(k1.mint(t, claims("alice"), nil))
	if err != nil || tok.User != "alice" {
		t.Fatalf("token of the first key: %+v, %v", tok, err)
	}
	if n := srv.fetches.Load(); n != 1 {
		t.Fatalf("fetches = %d after the first token, want 1", n)
	}

	srv.publish(k1, k2)
	clk.Advance(auth.DefaultJWKSMinRefreshInterval)
	if tok, err := v.VerifyConnectToken(k2.mint(t, claims("bob"), nil)); err != nil || tok.User != "bob" {
		t.Fatalf("token of the new key: %+v, %v", tok, err)
	}
	if n := srv.fetches.Load(); n != 2 {
		t.Fatalf("fetches = %d after the new kid, want 2 (exactly one refresh)", n)
	}
	if _, err := v.VerifyConnectToken(k1.mint(t, claims("carol"), nil)); err != nil {
		t.Fatalf("token of the first key after rotation: %v", err)
	}
	st, err := v.VerifySubscribeToken(k2.mint(t, map[string]any{"sub": "bob", "channel": "news", "exp": inAnHour()}, nil))
	if err != nil || st.Channel != "news" {
		t.Fatalf("subscription token of the new key: %+v, %v", st, err)
	}
	if n := srv.fetches.Load(); n != 2 {
		t.Fatalf("fetches = %d, want still 2: known kids are served from the cache", n)
	}
	if got := metric(t, v.Collectors(), "herald_jwks_keys", map[string]string{"token": "client.token"}); got != 2 {
		t.Fatalf("herald_jwks_keys = %v, want 2", got)
	}
}

// TestJWKSUnknownKidOneFetch: many tokens with a kid not yet cached, at
// once, share one fetch; a kid the provider does not have is refused, and
// asking again within the minimum interval fetches nothing more.
func TestJWKSUnknownKidOneFetch(t *testing.T) {
	k1 := newIdPKey(t, "a", jose.RS256)
	k2 := newIdPKey(t, "b", jose.RS256)
	srv := newJWKSServer(t, k1)
	v := newVerifier(t, auth.Config{JWKS: srv.config("client.token")})
	clk := newClock(v)
	if _, err := v.VerifyConnectToken(k1.mint(t, claims("u"), nil)); err != nil {
		t.Fatal(err)
	}

	srv.publish(k1, k2)
	clk.Advance(auth.DefaultJWKSMinRefreshInterval)
	release := srv.hold()
	tok := k2.mint(t, claims("u"), nil)
	const n = 32
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			_, err := v.VerifyConnectToken(tok)
			errs <- err
		})
	}
	testenv.Eventually(t, "the refresh to reach the provider", 5*time.Second, func() bool { return srv.fetches.Load() == 2 })
	release()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent token: %v", err)
		}
	}
	if got := srv.fetches.Load(); got != 2 {
		t.Fatalf("fetches = %d, want 2: %d concurrent misses share one fetch", got, n)
	}

	ghost := newIdPKey(t, "ghost", jose.RS256).mint(t, claims("u"), nil)
	for range 3 {
		_, err := v.VerifyConnectToken(ghost)
		wantInvalid(t, err)
		if !strings.Contains(err.Error(), `kid "ghost"`) {
			t.Fatalf("error %q does not name the kid", err)
		}
	}
	if got := srv.fetches.Load(); got != 2 {
		t.Fatalf("fetches = %d after unknown kids within the interval, want still 2", got)
	}
	// Once the interval has passed, an unknown kid fetches again.
	clk.Advance(auth.DefaultJWKSMinRefreshInterval)
	_, err := v.VerifyConnectToken(ghost)
	wantInvalid(t, err)
	if got := srv.fetches.Load(); got != 3 {
		t.Fatalf("fetches = %d after the interval, want 3", got)
	}
}

// TestJWKSDownKeepsCachedKeys: when the provider goes down, the keys
// fetched before keep verifying tokens past their maximum age; the
// failure is logged and in the metrics, and once the provider is back the
// set is refreshed.
func TestJWKSDownKeepsCachedKeys(t *testing.T) {
	k1 := newIdPKey(t, "a", jose.ES384)
	srv := newJWKSServer(t, k1)
	logs := testenv.NewLogWatch(slog.LevelWarn)
	cfg := srv.config("client.subscription_token")
	cfg.Logger = slog.New(logs)
	v := newVerifier(t, auth.Config{JWKS: cfg})
	clk := newClock(v)
	sub := map[string]any{"sub": "u", "channel": "c", "exp": inAnHour()}
	if _, err := v.VerifySubscribeToken(k1.mint(t, sub, nil)); err != nil {
		t.Fatal(err)
	}

	srv.setDown(true)
	clk.Advance(auth.DefaultJWKSMaxAge)
	// The stale key answers at once; the refresh runs behind and fails.
	if _, err := v.VerifySubscribeToken(k1.mint(t, sub, nil)); err != nil {
		t.Fatalf("cached key with the provider down: %v", err)
	}
	logs.Await(t, "JWKS endpoint unavailable: keeping the cached keys", 5*time.Second)
	cs := v.Collectors()
	testenv.Eventually(t, "herald_jwks_up to be 0", 5*time.Second, func() bool {
		return metric(t, cs, "herald_jwks_up", map[string]string{"token": "client.subscription_token"}) == 0
	})
	if got := metric(t, cs, "herald_jwks_keys", nil); got != 1 {
		t.Fatalf("herald_jwks_keys = %v with the provider down, want the 1 cached key", got)
	}
	for range 3 {
		if _, err := v.VerifySubscribeToken(k1.mint(t, sub, nil)); err != nil {
			t.Fatalf("cached key with the provider down: %v", err)
		}
	}
	// An unknown kid says that the set could not be fetched.
	clk.Advance(auth.DefaultJWKSMinRefreshInterval)
	_, err := v.VerifySubscribeToken(newIdPKey(t, "b", jose.ES256).mint(t, sub, nil))
	wantInvalid(t, err)
	if !strings.Contains(err.Error(), "could not be fetched") {
		t.Fatalf("error %q does not say the key set could not be fetched", err)
	}
	if got := srv.fetches.Load(); got != 3 {
		t.Fatalf("fetches = %d, want 3 (first, background refresh, unknown kid)", got)
	}

	// Back up: the next miss fetches the new set.
	k2 := newIdPKey(t, "b", jose.ES256)
	srv.publish(k2)
	srv.setDown(false)
	clk.Advance(auth.DefaultJWKSMinRefreshInterval)
	if _, err := v.VerifySubscribeToken(k2.mint(t, sub, nil)); err != nil {
		t.Fatalf("new key once the provider is back: %v", err)
	}
	if got := metric(t, cs, "herald_jwks_up", nil); got != 1 {
		t.Fatalf("herald_jwks_up = %v once the provider is back, want 1", got)
	}
	// The first key is gone from the set, and so from the cache.
	_, err = v.VerifySubscribeToken(k1.mint(t, sub, nil))
	wantInvalid(t, err)
}

// TestJWKSDownFromTheStart: a provider that cannot be reached refuses the
// token with the reason, logs a warning and sets the metrics.
func TestJWKSDownFromTheStart(t *testing.T) {
	k := newIdPKey(t, "a", jose.RS256)
	srv := newJWKSServer(t, k)
	srv.setDown(true)
	logs := testenv.NewLogWatch(slog.LevelWarn)
	cfg := srv.config("client.token")
	cfg.Logger = slog.New(logs)
	v := newVerifier(t, auth.Config{JWKS: cfg})
	_, err := v.VerifyConnectToken(k.mint(t, claims("u"), nil))
	wantInvalid(t, err)
	if !strings.Contains(err.Error(), "503") {
		t.Fatalf("error %q does not say why the key set could not be fetched", err)
	}
	logs.Await(t, "JWKS endpoint unavailable: keeping the cached keys", time.Second)
	cs := v.Collectors()
	if got := metric(t, cs, "herald_jwks_up", nil); got != 0 {
		t.Fatalf("herald_jwks_up = %v, want 0", got)
	}
	if got := metric(t, cs, "herald_jwks_fetches_total", map[string]string{"result": "error"}); got != 1 {
		t.Fatalf("failed fetches = %v, want 1", got)
	}
}

// TestJWKSTLS: the key set is fetched over HTTPS only with a trusted
// certificate.
func TestJWKSTLS(t *testing.T) {
	k := newIdPKey(t, "a", jose.ES256)
	srv := newJWKSServer(t, k)
	cfg := srv.config("client.token")
	cfg.TLS = nil // the system's roots do not hold the test CA
	cfg.Logger = slog.New(testenv.NewLogWatch(slog.LevelWarn))
	v := newVerifier(t, auth.Config{JWKS: cfg})
	_, err := v.VerifyConnectToken(k.mint(t, claims("u"), nil))
	wantInvalid(t, err)
	if !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("error %q does not name the certificate problem", err)
	}
	v = newVerifier(t, auth.Config{JWKS: srv.config("client.token")})
	if _, err := v.VerifyConnectToken(k.mint(t, claims("u"), nil)); err != nil {
		t.Fatalf("with the CA trusted: %v", err)
	}
}

// TestJWKSBadTokens: every token that does not fit the key set is invalid,
// with a reason, and some are refused before anything is fetched.
func TestJWKSBadTokens(t *testing.T) {
	rsaKey := newIdPKey(t, "rsa", jose.RS256)
	ecKey := newIdPKey(t, "ec", jose.ES256)
	srv := newJWKSServer(t, rsaKey, ecKey)
	v := newVerifier(t, auth.Config{JWKS: srv.config("client.token")})

	before := srv.fetches.Load()
	crit := rsaKey.mint(t, claims("u"), map[jose.HeaderKey]any{"crit": []string{"exp"}})
	_, err := v.VerifyConnectToken(crit)
	wantInvalid(t, err)
	noKid := signRaw(t, jwt.SigningMethodRS256, rsaKey.priv, jwt.MapClaims{"sub": "u"})
	_, err = v.VerifyConnectToken(noKid)
	wantInvalid(t, err)
	hs := signRaw(t, jwt.SigningMethodHS256, []byte(testSecret), jwt.MapClaims{"sub": "u"})
	_, err = v.VerifyConnectToken(hs)
	wantInvalid(t, err)
	if got := srv.fetches.Load(); got != before {
		t.Fatalf("fetches = %d, want %d: these tokens need no key set", got, before)
	}

	cases := map[string]string{
		// An EC key's kid on an RS256 token (and the other way round):
		// the kid picks the key, the key must fit the algorithm.
		"RS256 with the EC kid": func() string {
			tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"sub": "u"})
			tok.Header["kid"] = "ec"
			s, _ := tok.SignedString(rsaKey.priv)
			return s
		}(),
		"ES256 with the RSA kid": func() string {
			tok := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{"sub": "u"})
			tok.Header["kid"] = "rsa"
			s, _ := tok.SignedString(ecKey.priv)
			return s
		}(),
		"RS384 with an RS256 key": func() string {
			tok := jwt.NewWithClaims(jwt.SigningMethodRS384, jwt.MapClaims{"sub": "u"})
			tok.Header["kid"] = "rsa"
			s, _ := tok.SignedString(rsaKey.priv)
			return s
		}(),
		"signed by another key": newIdPKey(t, "rsa", jose.RS256).mint(t, claims("u"), nil),
		"kid not a string": func() string {
			tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"sub": "u"})
			tok.Header["kid"] = 7
			s, _ := tok.SignedString(rsaKey.priv)
			return s
		}(),
		"alg none": func() string {
			tok := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"sub": "u"})
			tok.Header["kid"] = "rsa"
			s, _ := tok.SignedString(jwt.UnsafeAllowNoneSignatureType)
			return s
		}(),
	}
	for name, tok := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := v.VerifyConnectToken(tok)
			wantInvalid(t, err)
			_, err = v.VerifySubscribeToken(tok)
			wantInvalid(t, err)
		})
	}
}

// TestJWKSWithPEMKeys: with both, a token with a kid is checked against
// the key set and a token without one against the PEM key.
func TestJWKSWithPEMKeys(t *testing.T) {
	jk := newIdPKey(t, "a", jose.RS256)
	pem := newRSAKey(t)
	srv := newJWKSServer(t, jk)
	v := newVerifier(t, auth.Config{RSAPublicKey: pem.pubPEM, HMACSecretKey: testSecret, JWKS: srv.config("client.token")})
	if _, err := v.VerifyConnectToken(signRaw(t, jwt.SigningMethodRS256, pem.priv, jwt.MapClaims{"sub": "u"})); err != nil {
		t.Fatalf("PEM-signed token without kid: %v", err)
	}
	if _, err := v.VerifyConnectToken(jk.mint(t, claims("u"), nil)); err != nil {
		t.Fatalf("JWKS token: %v", err)
	}
	if _, err := v.VerifyConnectToken(hs256(t, jwt.MapClaims{"sub": "u"})); err != nil {
		t.Fatalf("HMAC token: %v", err)
	}
}

func TestJWKSConfigRefused(t *testing.T) {
	for name, url := range map[string]string{
		"no scheme":  "idp.example.com/jwks",
		"ftp":        "ftp://idp.example.com/jwks",
		"no host":    "https:///jwks",
		"template":   "https://idp.example.com/{{tenant}}/jwks",
		"bad escape": "https://idp.example.com/%zz",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := auth.NewVerifier(auth.Config{JWKS: &auth.JWKSConfig{URL: url}}); err == nil || !strings.Contains(err.Error(), "JWKS") {
				t.Fatalf("NewVerifier(%q) = %v, want an error naming JWKS", url, err)
			}
		})
	}
}

// TestJWKSSkipsUnusableKeys: keys a token cannot be verified with are
// skipped, not fatal (providers publish encryption and other keys next to
// their signing keys); a set with no usable key, or too large, is a failed
// fetch; a published private key is used by its public half.
func TestJWKSSkipsUnusableKeys(t *testing.T) {
	good := newIdPKey(t, "good", jose.RS256)
	priv := newIdPKey(t, "private", jose.ES256)
	goodJSON, _ := good.public().MarshalJSON()
	privJSON, _ := jose.JSONWebKey{Key: priv.priv, KeyID: "private", Use: "sig"}.MarshalJSON()
	enc := good.public()
	enc.KeyID, enc.Use = "enc", "enc"
	encJSON, _ := enc.MarshalJSON()
	noKid := good.public()
	noKid.KeyID = ""
	noKidJSON, _ := noKid.MarshalJSON()
	unusable := []string{
		string(encJSON),
		string(noKidJSON),
		`{"kty":"oct","kid":"hmac","k":"c2VjcmV0"}`,
		`{"kty":"OKP","kid":"ed","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}`,
		`{"kty":"XYZ","kid":"future"}`,
		`"not an object"`,
	}
	var body atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(body.Load().(string)))
	}))
	defer srv.Close()
	set := func(keys ...string) string { return `{"keys":[` + strings.Join(keys, ",") + `]}` }

	body.Store(set(append(unusable, string(goodJSON), string(privJSON))...))
	v := newVerifier(t, auth.Config{JWKS: &auth.JWKSConfig{URL: srv.URL}})
	clk := newClock(v)
	if _, err := v.VerifyConnectToken(good.mint(t, claims("u"), nil)); err != nil {
		t.Fatalf("good key among unusable ones: %v", err)
	}
	if _, err := v.VerifyConnectToken(priv.mint(t, claims("u"), nil)); err != nil {
		t.Fatalf("published private key: %v", err)
	}
	if got := metric(t, v.Collectors(), "herald_jwks_keys", nil); got != 2 {
		t.Fatalf("herald_jwks_keys = %v, want 2", got)
	}
	for _, kid := range []string{"enc", "hmac", "ed"} {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"sub": "u"})
		tok.Header["kid"] = kid
		s, _ := tok.SignedString(good.priv)
		_, err := v.VerifyConnectToken(s)
		wantInvalid(t, err)
	}

	for name, b := range map[string]string{
		"only unusable keys": set(unusable...),
		"no keys":            `{"keys":[]}`,
		"not JSON":           `<html>`,
		"too large":          set(string(goodJSON)) + strings.Repeat(" ", 1<<20),
	} {
		body.Store(b)
		clk.Advance(auth.DefaultJWKSMaxAge)
		// The stale key answers and triggers the refresh, which fails;
		// the next unknown kid waits for nothing and names the failure.
		if _, err := v.VerifyConnectToken(good.mint(t, claims("u"), nil)); err != nil {
			t.Fatalf("%s: cached key: %v", name, err)
		}
		testenv.Eventually(t, name+": the failed refresh", 5*time.Second, func() bool {
			return metric(t, v.Collectors(), "herald_jwks_up", nil) == 0
		})
		if _, err := v.VerifyConnectToken(good.mint(t, claims("u"), nil)); err != nil {
			t.Fatalf("%s: cached key after the failed refresh: %v", name, err)
		}
		body.Store(set(string(goodJSON), string(privJSON)))
		clk.Advance(auth.DefaultJWKSMaxAge)
		_, _ = v.VerifyConnectToken(good.mint(t, claims("u"), nil))
		testenv.Eventually(t, name+": the next refresh", 5*time.Second, func() bool {
			return metric(t, v.Collectors(), "herald_jwks_up", nil) == 1
		})
	}
}

// TestJWKSCrossHostRedirectRefused: an endpoint that redirects to another
// host does not get to replace the key set with what that host serves; the
// refusal is logged with both URLs and the cached keys stay. A redirect
// within the host is followed.
func TestJWKSCrossHostRedirectRefused(t *testing.T) {
	k1 := newIdPKey(t, "a", jose.RS256)
	k2 := newIdPKey(t, "b", jose.RS256)
	srv := newJWKSServer(t, k1)
	other := newJWKSServer(t, k2) // httptest's TLS servers share a certificate: trusted too
	var logs testenv.LockedBuffer
	cfg := srv.config("client.token")
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	v := newVerifier(t, auth.Config{JWKS: cfg})
	clk := newClock(v)
	if _, err := v.VerifyConnectToken(k1.mint(t, claims("u"), nil)); err != nil {
		t.Fatal(err)
	}

	otherURL := other.srv.URL + jwksPath
	srv.redirectTo(otherURL)
	clk.Advance(auth.DefaultJWKSMinRefreshInterval)
	_, err := v.VerifyConnectToken(k2.mint(t, claims("u"), nil))
	wantInvalid(t, err)
	if !strings.Contains(err.Error(), otherURL) {
		t.Errorf("error %q does not name the redirect", err)
	}
	if n := other.fetches.Load(); n != 0 {
		t.Fatalf("the other host was fetched %d times", n)
	}
	if _, err := v.VerifyConnectToken(k1.mint(t, claims("u"), nil)); err != nil {
		t.Fatalf("cached key after a refused redirect: %v", err)
	}
	line := logs.String()
	if !strings.Contains(line, "JWKS endpoint redirected to another host") || !strings.Contains(line, cfg.URL) || !strings.Contains(line, otherURL) {
		t.Errorf("log does not name both URLs: %s", line)
	}

	// Within the host, the redirect is followed.
	srv.redirectTo("/keys/current.json")
	srv.publish(k1, k2)
	clk.Advance(auth.DefaultJWKSMinRefreshInterval)
	if _, err := v.VerifyConnectToken(k2.mint(t, claims("u"), nil)); err != nil {
		t.Fatalf("redirect within the host: %v", err)
	}
}
