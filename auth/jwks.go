package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Defaults of JWKSConfig's zero durations.
const (
	DefaultJWKSMaxAge             = time.Hour
	DefaultJWKSMinRefreshInterval = 10 * time.Second
	DefaultJWKSTimeout            = 10 * time.Second
)

// maxJWKSBody bounds what one fetch reads: real key sets are a few KiB, and
// an endpoint that streams without end must not take the node's memory.
const maxJWKSBody = 1 << 20

// JWKSConfig is where a Verifier gets the RS* and ES* keys of an identity
// provider (Auth0, Keycloak, Cognito, ...): its JSON Web Key Set (RFC 7517).
// A token names its key with the kid header.
type JWKSConfig struct {
	// URL of the key set (the provider's jwks_uri).
	URL string
	// TLS for an https URL; nil means the system's roots.
	TLS *tls.Config
	// MaxAge is how long fetched keys are used before the set is fetched
	// again, in the background while the cached keys keep answering; zero
	// means DefaultJWKSMaxAge.
	MaxAge time.Duration
	// MinRefreshInterval is the least time between two fetches: a token
	// whose kid is not in the set triggers a fetch, and tokens with
	// made-up kids must not turn the node into a flood of requests to the
	// provider. Zero means DefaultJWKSMinRefreshInterval.
	MinRefreshInterval time.Duration
	// Timeout bounds one fetch; zero means DefaultJWKSTimeout.
	Timeout time.Duration
	// Name labels the logs and metrics ("client.token").
	Name string
	// Logger receives a warning for every failed fetch; nil means
	// slog.Default().
	Logger *slog.Logger
}

// check reports a URL that cannot be fetched.
func (c JWKSConfig) check() error {
	u, err := url.Parse(c.URL)
	if err != nil {
		return fmt.Errorf("URL: %w", err)
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("URL %q: want an http:// or https:// URL", c.URL)
	}
	if strings.Contains(c.URL, "{{") {
		// Centrifugo fills {{name}} from the token's iss or aud; Herald
		// fetches one fixed set, so a template must not be taken as a URL.
		return fmt.Errorf("URL %q: templated endpoints ({{...}}) are not supported; configure the URL of one key set", c.URL)
	}
	if c.MaxAge < 0 || c.MinRefreshInterval < 0 || c.Timeout < 0 {
		return errors.New("durations must not be negative")
	}
	return nil
}

// jwks is a cached key set. Keys are looked up by kid; a kid that is not
// cached makes one fetch (concurrent misses wait for the same one), at
// most once per MinRefreshInterval. A failed fetch keeps the keys already
// cached, so a provider that is down stops no token the node could verify
// before.
type jwks struct {
	url          string
	client       *http.Client
	maxAge       time.Duration
	minInterval  time.Duration
	name         string
	log          *slog.Logger
	metrics      *jwksMetrics
	now          func() time.Time
	fetchTimeout time.Duration

	mu        sync.Mutex
	keys      map[string]jose.JSONWebKey // by kid
	fetched   time.Time                  // last successful fetch
	attempted time.Time                  // start of the last fetch
	lastErr   error                      // of the last fetch; nil after a success
	inflight  chan struct{}              // closed when the running fetch ends; nil when none runs
}

func newJWKS(c JWKSConfig) *jwks {
	j := &jwks{
		url: c.URL, maxAge: c.MaxAge, minInterval: c.MinRefreshInterval, fetchTimeout: c.Timeout,
		name: c.Name, log: c.Logger, now: time.Now,
	}
	if j.maxAge == 0 {
		j.maxAge = DefaultJWKSMaxAge
	}
	if j.minInterval == 0 {
		j.minInterval = DefaultJWKSMinRefreshInterval
	}
	if j.fetchTimeout == 0 {
		j.fetchTimeout = DefaultJWKSTimeout
	}
	if j.log == nil {
		j.log = slog.Default()
	}
	// The default transport's settings (proxy from the environment,
	// timeouts), with a TLS configuration of its own.
	tr := &http.Transport{Proxy: http.ProxyFromEnvironment, TLSHandshakeTimeout: 10 * time.Second, IdleConnTimeout: 90 * time.Second}
	if dt, ok := http.DefaultTransport.(*http.Transport); ok {
		tr = dt.Clone()
	}
	if c.TLS != nil {
		tr.TLSClientConfig = c.TLS.Clone()
	}
	j.client = &http.Client{Transport: tr, Timeout: j.fetchTimeout, CheckRedirect: sameHostRedirect}
	j.metrics = newJWKSMetrics(c.Name)
	return j
}

// key returns the key the set holds for kid, fetching the set when kid is
// not cached and the last fetch is older than the minimum interval.
func (j *jwks) key(kid string) (jose.JSONWebKey, error) {
	j.mu.Lock()
	now := j.now()
	if k, ok := j.keys[kid]; ok {
		if now.Sub(j.fetched) >= j.maxAge && j.inflight == nil && now.Sub(j.attempted) >= j.minInterval {
			// Stale but present: answer now, refresh behind.
			j.startLocked(now)
		}
		j.mu.Unlock()
		return k, nil
	}
	if j.inflight == nil {
		if !j.attempted.IsZero() && now.Sub(j.attempted) < j.minInterval {
			err := j.unknownLocked(kid, now)
			j.mu.Unlock()
			return jose.JSONWebKey{}, err
		}
		j.startLocked(now)
	}
	done := j.inflight
	j.mu.Unlock()

	<-done

	j.mu.Lock()
	defer j.mu.Unlock()
	if k, ok := j.keys[kid]; ok {
		return k, nil
	}
	return jose.JSONWebKey{}, j.unknownLocked(kid, j.now())
}

// unknownLocked describes why kid has no key: not in the set as last
// fetched, or the set could not be fetched.
func (j *jwks) unknownLocked(kid string, now time.Time) error {
	if j.lastErr != nil {
		return fmt.Errorf("kid %q: not among the %d cached keys, and the key set could not be fetched: %w", kid, len(j.keys), j.lastErr)
	}
	return fmt.Errorf("kid %q: not in the key set fetched %s ago from %s", kid, now.Sub(j.fetched).Round(time.Millisecond), j.url)
}

// startLocked starts a fetch. It runs on its own, so a caller that stops
// waiting (or a background refresh) never leaves it half done; the HTTP
// client's timeout bounds it.
func (j *jwks) startLocked(now time.Time) {
	done := make(chan struct{})
	j.inflight, j.attempted = done, now
	go func() {
		keys, err := j.fetch()
		j.mu.Lock()
		j.store(keys, err)
		j.inflight = nil
		j.mu.Unlock()
		close(done)
	}()
}

// store records a fetch's result under j.mu.
func (j *jwks) store(keys map[string]jose.JSONWebKey, err error) {
	if err != nil {
		j.lastErr = err
		j.metrics.fetches.WithLabelValues("error").Inc()
		j.metrics.up.Set(0)
		last := "never"
		if !j.fetched.IsZero() {
			last = j.fetched.UTC().Format(time.RFC3339)
		}
		var redirect *crossHostRedirectError
		if errors.As(err, &redirect) {
			j.log.Warn("JWKS endpoint redirected to another host: refused, keeping the cached keys",
				"token", j.name, "url", j.url, "redirect_url", redirect.to, "cached_keys", len(j.keys), "last_success", last)
			return
		}
		j.log.Warn("JWKS endpoint unavailable: keeping the cached keys",
			"token", j.name, "url", j.url, "error", err, "cached_keys", len(j.keys), "last_success", last)
		return
	}
	if !sameKids(j.keys, keys) {
		j.log.Info("JWKS key set changed", "token", j.name, "url", j.url, "kids", kids(keys))
	}
	j.keys, j.fetched, j.lastErr = keys, j.now(), nil
	j.metrics.fetches.WithLabelValues("ok").Inc()
	j.metrics.up.Set(1)
	j.metrics.keys.Set(float64(len(keys)))
	j.metrics.lastSuccess.Set(float64(j.fetched.UnixNano()) / 1e9)
}

// fetch gets and parses the key set.
func (j *jwks) fetch() (map[string]jose.JSONWebKey, error) {
	ctx, cancel := context.WithTimeout(context.Background(), j.fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := j.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxJWKSBody))
		return nil, fmt.Errorf("GET %s: status %s", j.url, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBody+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", j.url, err)
	}
	if len(body) > maxJWKSBody {
		return nil, fmt.Errorf("GET %s: key set larger than %d bytes", j.url, maxJWKSBody)
	}
	return parseJWKS(body)
}

// crossHostRedirectError is a redirect sameHostRedirect refused.
type crossHostRedirectError struct{ from, to string }

func (e *crossHostRedirectError) Error() string {
	return fmt.Sprintf("%s redirected to %s, another host (or from https to http): refused", e.from, e.to)
}

// sameHostRedirect follows a redirect only to the host (and port) of the
// configured URL, and never from https to http: the key set decides which
// tokens the node accepts, so whoever the endpoint points to must not get
// to replace it. (The proxy client follows no redirect at all, since a
// proxy endpoint answers itself; key sets do move within their host, so
// those redirects are still followed, up to the client's usual ten.)
func sameHostRedirect(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	if req.URL.Host != first.Host || first.Scheme == "https" && req.URL.Scheme != "https" {
		return &crossHostRedirectError{from: first.String(), to: req.URL.String()}
	}
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}

// parseJWKS keeps the keys a token can be verified with: public RSA and EC
// signature keys with a kid. Others (encryption keys, symmetric keys,
// curves Herald does not verify) are skipped, not refused, since providers
// publish them next to the signing keys. A set without a usable key is an
// error, so that a broken answer never replaces good cached keys.
func parseJWKS(body []byte) (map[string]jose.JSONWebKey, error) {
	// Each key is decoded alone: go-jose refuses a whole set for one key
	// of a type it does not know, and providers add new types over time.
	var raw struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("key set: %w", err)
	}
	keys := make(map[string]jose.JSONWebKey, len(raw.Keys))
	var skipped []string
	for i, r := range raw.Keys {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(r); err != nil {
			skipped = append(skipped, fmt.Sprintf("key %d: %v", i, err))
			continue
		}
		if why := unusable(k); why != "" {
			skipped = append(skipped, fmt.Sprintf("kid %q: %s", k.KeyID, why))
			continue
		}
		if !k.IsPublic() {
			// A set that publishes private keys is broken, but the
			// public half is still the right one to verify with.
			k = k.Public()
		}
		if _, dup := keys[k.KeyID]; dup {
			skipped = append(skipped, fmt.Sprintf("kid %q: listed twice, the first is used", k.KeyID))
			continue
		}
		keys[k.KeyID] = k
	}
	if len(keys) == 0 {
		if len(skipped) > 0 {
			return nil, fmt.Errorf("key set has no usable signature key (%s)", strings.Join(skipped, "; "))
		}
		return nil, errors.New("key set has no keys")
	}
	return keys, nil
}

func unusable(k jose.JSONWebKey) string {
	switch {
	case k.KeyID == "":
		return "no kid"
	case k.Use != "" && k.Use != "sig":
		return fmt.Sprintf("use %q is not sig", k.Use)
	}
	switch key := k.Key.(type) {
	case *rsa.PublicKey, *rsa.PrivateKey:
		return ""
	case *ecdsa.PublicKey:
		if _, err := ecdsaAlg(key.Curve); err != nil {
			return err.Error()
		}
		return ""
	case *ecdsa.PrivateKey:
		if _, err := ecdsaAlg(key.Curve); err != nil {
			return err.Error()
		}
		return ""
	}
	return fmt.Sprintf("key type %T cannot verify RS* or ES* tokens", k.Key)
}

// verificationKey returns the key of k for a token of algorithm alg, or
// why it does not fit: an alg on the key must be the token's, an RSA key
// takes RS*, an EC key the one ES* of its curve.
func verificationKey(k jose.JSONWebKey, alg string) (any, error) {
	if k.Algorithm != "" && k.Algorithm != alg {
		return nil, fmt.Errorf("kid %q is for %s, the token is %s", k.KeyID, k.Algorithm, alg)
	}
	switch key := k.Key.(type) {
	case *rsa.PublicKey:
		if strings.HasPrefix(alg, "RS") {
			return key, nil
		}
	case *ecdsa.PublicKey:
		if want, err := ecdsaAlg(key.Curve); err == nil && want == alg {
			return key, nil
		}
	}
	return nil, fmt.Errorf("kid %q (%T) cannot verify a %s token", k.KeyID, k.Key, alg)
}

func sameKids(a, b map[string]jose.JSONWebKey) bool {
	if len(a) != len(b) {
		return false
	}
	for kid := range a {
		if _, ok := b[kid]; !ok {
			return false
		}
	}
	return true
}

func kids(keys map[string]jose.JSONWebKey) []string {
	out := make([]string, 0, len(keys))
	for kid := range keys {
		out = append(out, kid)
	}
	sort.Strings(out)
	return out
}
