package config

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/heraldhq/herald/auth"
)

// TokenKeys are the keys and claim checks of connection or subscription
// JWTs, under Centrifugo v6's names. The previous keys and jwks_tls are
// Herald's own.
type TokenKeys struct {
	HMACSecretKey  string `yaml:"hmac_secret_key" doc:"secret for HS256/384/512 JWTs"`
	RSAPublicKey   string `yaml:"rsa_public_key" doc:"PEM public key for RS256/384/512"`
	ECDSAPublicKey string `yaml:"ecdsa_public_key" doc:"PEM public key for ES256/384/512 (the algorithm must match the curve)"`

	HMACPreviousSecretKey            string `yaml:"hmac_previous_secret_key" doc:"the secret being rotated out: HS* tokens signed with it stay valid next to those of 'hmac_secret_key' until 'hmac_previous_secret_key_valid_until'. See [Key rotation](#key-rotation)"`
	HMACPreviousSecretKeyValidUntil  string `yaml:"hmac_previous_secret_key_valid_until" defaultdoc:"for as long as the previous key is configured" doc:"RFC 3339 time ('2026-12-01T00:00:00Z') after which tokens of 'hmac_previous_secret_key' are refused"`
	RSAPreviousPublicKey             string `yaml:"rsa_previous_public_key" doc:"the PEM public key being rotated out, accepted next to 'rsa_public_key' until 'rsa_previous_public_key_valid_until'"`
	RSAPreviousPublicKeyValidUntil   string `yaml:"rsa_previous_public_key_valid_until" defaultdoc:"for as long as the previous key is configured" doc:"RFC 3339 time after which tokens of 'rsa_previous_public_key' are refused"`
	ECDSAPreviousPublicKey           string `yaml:"ecdsa_previous_public_key" doc:"the PEM public key being rotated out (same curve as 'ecdsa_public_key'), accepted next to it until 'ecdsa_previous_public_key_valid_until'"`
	ECDSAPreviousPublicKeyValidUntil string `yaml:"ecdsa_previous_public_key_valid_until" defaultdoc:"for as long as the previous key is configured" doc:"RFC 3339 time after which tokens of 'ecdsa_previous_public_key' are refused"`

	JWKSPublicEndpoint string `yaml:"jwks_public_endpoint" doc:"URL of an identity provider's JSON Web Key Set (Auth0, Keycloak, Cognito, Okta...): RS* and ES* tokens with a 'kid' header are verified with that key of the set. The set is fetched when a token needs it, again when a token names an unknown 'kid' (at most once per 10 s) and in the background after an hour; while the provider is down the cached keys keep working. See [Identity providers](#identity-providers)"`
	// JWKSTLS: the TLS of an https jwks_public_endpoint (clienttls.go).
	JWKSTLS ClientTLSFiles `yaml:"jwks_tls"`

	Audience      string `yaml:"audience" doc:"when set, tokens must carry this 'aud'"`
	AudienceRegex string `yaml:"audience_regex" doc:"when set, one 'aud' value of a token must match this regular expression (Go syntax, unanchored: use '^...$' to match the whole value); not with 'audience'"`
	Issuer        string `yaml:"issuer" doc:"when set, tokens must carry this 'iss'"`
	IssuerRegex   string `yaml:"issuer_regex" doc:"when set, a token's 'iss' must match this regular expression (Go syntax, unanchored: use '^...$'); not with 'issuer'"`
	UserIDClaim   string `yaml:"user_id_claim" defaultdoc:"'sub'" doc:"the claim that holds the user ID, for identity providers whose 'sub' is not the application's user ID; it must be a string"`
}

// TokenConfig is client.token: the keys of connection tokens (and of
// subscription tokens unless client.subscription_token is enabled).
type TokenConfig struct {
	TokenKeys `yaml:",inline"`
	// TokenCacheConfig: cache_size (accept.go).
	TokenCacheConfig `yaml:",inline"`
}

// SubscriptionTokenConfig is client.subscription_token, Centrifugo's
// separate keys for subscription tokens.
type SubscriptionTokenConfig struct {
	Enabled   bool `yaml:"enabled" doc:"verify subscription tokens with the keys of this section instead of those of 'client.token'"`
	TokenKeys `yaml:",inline"`
}

// Auth is the token configuration for auth.NewVerifier, without what the
// server adds (the JWKS TLS files it reads, the logger).
func (t TokenConfig) Auth() auth.Config {
	c := t.TokenKeys.auth("client.token")
	c.ConnectTokenCacheSize = t.CacheSize
	return c
}

// Auth is the subscription token configuration for auth.NewVerifier.
func (t SubscriptionTokenConfig) Auth() auth.Config {
	return t.TokenKeys.auth("client.subscription_token")
}

// Configured reports whether any token key is set.
func (t TokenKeys) Configured() bool {
	return t.HMACSecretKey != "" || t.RSAPublicKey != "" || t.ECDSAPublicKey != "" || t.JWKSPublicEndpoint != ""
}

func (t TokenKeys) auth(name string) auth.Config {
	c := auth.Config{
		HMACSecretKey: t.HMACSecretKey, RSAPublicKey: t.RSAPublicKey, ECDSAPublicKey: t.ECDSAPublicKey,
		HMACPreviousSecretKey: t.HMACPreviousSecretKey, RSAPreviousPublicKey: t.RSAPreviousPublicKey, ECDSAPreviousPublicKey: t.ECDSAPreviousPublicKey,
		HMACPreviousSecretKeyValidUntil:  validUntil(t.HMACPreviousSecretKeyValidUntil),
		RSAPreviousPublicKeyValidUntil:   validUntil(t.RSAPreviousPublicKeyValidUntil),
		ECDSAPreviousPublicKeyValidUntil: validUntil(t.ECDSAPreviousPublicKeyValidUntil),
		Audience:                         t.Audience, AudienceRegex: t.AudienceRegex,
		Issuer: t.Issuer, IssuerRegex: t.IssuerRegex,
		UserIDClaim: t.UserIDClaim,
	}
	if t.JWKSPublicEndpoint != "" {
		c.JWKS = &auth.JWKSConfig{URL: t.JWKSPublicEndpoint, Name: name}
	}
	return c
}

// validUntil parses a checked RFC 3339 time; "" is the zero time (no end).
func validUntil(s string) time.Time {
	v, _ := time.Parse(time.RFC3339, s)
	return v
}

// TokenVerifiers builds what verifies connection and subscription tokens,
// reading the JWKS TLS files: nil when no key is configured anywhere.
func (c Config) TokenVerifiers(log *slog.Logger) (*auth.Pair, error) {
	skip := c.Client.InsecureSkipTokenSignatureVerify
	connCfg, subCfg := c.Client.Token.Auth(), c.Client.SubscriptionToken.Auth()
	connCfg.InsecureSkipSignatureVerify, subCfg.InsecureSkipSignatureVerify = skip, skip
	conn, err := verifier("client.token", connCfg, c.Client.Token.TokenKeys, log)
	if err != nil {
		return nil, err
	}
	sub := conn
	if c.Client.SubscriptionToken.Enabled {
		if sub, err = verifier("client.subscription_token", subCfg, c.Client.SubscriptionToken.TokenKeys, log); err != nil {
			return nil, err
		}
	}
	if conn == nil && sub == nil && !skip {
		return nil, nil
	}
	// A side without keys refuses every token, as no verifier at all does,
	// unless signatures are not checked.
	if conn == nil {
		conn, _ = auth.NewVerifier(auth.Config{InsecureSkipSignatureVerify: skip})
	}
	if sub == nil {
		sub, _ = auth.NewVerifier(auth.Config{InsecureSkipSignatureVerify: skip})
	}
	return &auth.Pair{Connect: conn, Subscribe: sub}, nil
}

// verifier is nil when keys has no key.
func verifier(key string, cfg auth.Config, keys TokenKeys, log *slog.Logger) (*auth.Verifier, error) {
	if !keys.Configured() {
		return nil, nil
	}
	if cfg.JWKS != nil {
		cfg.JWKS.Logger = log
		if keys.JWKSTLS.IsSet() {
			tc, err := keys.JWKSTLS.Config()
			if err != nil {
				return nil, fmt.Errorf("%s.jwks_tls: %w", key, err)
			}
			cfg.JWKS.TLS = tc
		}
	}
	v, err := auth.NewVerifier(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return v, nil
}

// problems checks a token section without reading files or fetching keys,
// naming each key under key.
func (t TokenKeys) problems(key string, bad func(key, format string, args ...any)) {
	for _, p := range []struct{ name, prev, until, current string }{
		{"hmac", t.HMACPreviousSecretKey, t.HMACPreviousSecretKeyValidUntil, t.HMACSecretKey},
		{"rsa", t.RSAPreviousPublicKey, t.RSAPreviousPublicKeyValidUntil, t.RSAPublicKey},
		{"ecdsa", t.ECDSAPreviousPublicKey, t.ECDSAPreviousPublicKeyValidUntil, t.ECDSAPublicKey},
	} {
		prevKey, currentKey := key+"."+p.name+"_previous_public_key", key+"."+p.name+"_public_key"
		if p.name == "hmac" {
			prevKey, currentKey = key+".hmac_previous_secret_key", key+".hmac_secret_key"
		}
		if p.prev != "" && p.current == "" {
			bad(prevKey, "needs %s: the previous key is accepted next to the key that replaces it", currentKey)
		}
		if p.until != "" {
			if p.prev == "" {
				bad(prevKey+"_valid_until", "set without %s", prevKey)
			}
			if _, err := time.Parse(time.RFC3339, p.until); err != nil {
				bad(prevKey+"_valid_until", "%q: want an RFC 3339 time such as 2026-12-01T00:00:00Z", p.until)
			}
		}
	}
	if t.Audience != "" && t.AudienceRegex != "" {
		bad(key+".audience_regex", "not together with %s.audience: configure one of them", key)
	}
	if t.Issuer != "" && t.IssuerRegex != "" {
		bad(key+".issuer_regex", "not together with %s.issuer: configure one of them", key)
	}
	if t.JWKSTLS.IsSet() && t.JWKSPublicEndpoint == "" {
		bad(key+".jwks_tls", "set without %s.jwks_public_endpoint", key)
	}
	for _, p := range clientTLSProblems(key+".jwks_tls", t.JWKSTLS.Validate()) {
		bad(p.Key, "%s", p.Message)
	}
}

// tokenProblems checks client.token and client.subscription_token, then
// builds their verifiers (no key is fetched) to catch what only parsing
// finds: a PEM that is not a public key, a bad regular expression.
func (c Config) tokenProblems(report func(key, format string, args ...any)) {
	// A section with a problem named by key is not built as well: the
	// verifier would report the same problem again in its own terms.
	found := map[string]bool{}
	bad := func(key, format string, args ...any) {
		for _, s := range []string{"client.token", "client.subscription_token"} {
			if strings.HasPrefix(key, s) {
				found[s] = true
			}
		}
		report(key, format, args...)
	}
	c.Client.Token.validate(bad)
	c.Client.Token.problems("client.token", bad)
	st := c.Client.SubscriptionToken
	st.problems("client.subscription_token", bad)
	switch {
	case st.Enabled && !st.Configured():
		bad("client.subscription_token.enabled", "true, but the section has no key: set hmac_secret_key, rsa_public_key, ecdsa_public_key or jwks_public_endpoint")
	case !st.Enabled && st.TokenKeys != (TokenKeys{}):
		bad("client.subscription_token.enabled", "must be true for the other client.subscription_token keys to apply")
	}
	for _, s := range []struct {
		key  string
		keys TokenKeys
		cfg  auth.Config
	}{
		{"client.token", c.Client.Token.TokenKeys, c.Client.Token.Auth()},
		{"client.subscription_token", st.TokenKeys, st.Auth()},
	} {
		if !s.keys.Configured() || found[s.key] {
			continue
		}
		if _, err := auth.NewVerifier(s.cfg); err != nil {
			bad(s.key, "%v", err)
		}
	}
}
