package auth

import (
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

var errNoKey = errors.New("no token key configured")

// Verifier checks connection and subscription tokens against the keys of a
// Config. It is immutable after NewVerifier and safe for concurrent use.
type Verifier struct {
	// parser is nil when no key is configured; every token is then rejected.
	parser  *jwt.Parser
	keyFunc jwt.Keyfunc
	cache   *tokenCache // nil when off
	now     func() time.Time
}

// NewVerifier parses the configured keys once. An error names the Config
// field that holds the faulty key. A Config without any key is accepted and
// yields a Verifier that rejects every token.
func NewVerifier(cfg Config) (*Verifier, error) {
	var (
		methods  []string
		hmacKey  any // boxed once so the key function does not allocate per token
		rsaKey   any
		ecdsaKey any
	)
	if cfg.ConnectTokenCacheSize < 0 {
		return nil, fmt.Errorf("auth: ConnectTokenCacheSize %d: must not be negative", cfg.ConnectTokenCacheSize)
	}
	if cfg.HMACSecretKey != "" {
		hmacKey = []byte(cfg.HMACSecretKey)
		methods = append(methods, "HS256", "HS384", "HS512")
	}
	if cfg.RSAPublicKey != "" {
		key, err := parseRSAPublicKey(cfg.RSAPublicKey)
		if err != nil {
			return nil, fmt.Errorf("auth: RSAPublicKey: %w", err)
		}
		rsaKey = key
		methods = append(methods, "RS256", "RS384", "RS512")
	}
	if cfg.ECDSAPublicKey != "" {
		key, alg, err := parseECDSAPublicKey(cfg.ECDSAPublicKey)
		if err != nil {
			return nil, fmt.Errorf("auth: ECDSAPublicKey: %w", err)
		}
		ecdsaKey = key
		methods = append(methods, alg)
	}
	if len(methods) == 0 {
		return &Verifier{}, nil
	}

	opts := []jwt.ParserOption{jwt.WithValidMethods(methods)}
	if cfg.Audience != "" {
		opts = append(opts, jwt.WithAudience(cfg.Audience))
	}
	if cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(cfg.Issuer))
	}
	// The key is chosen by the method's family, never by anything else in the
	// header, so an HS token can only ever be checked against the HMAC secret
	// (this is what defeats the RSA-public-key-as-HMAC-secret confusion).
	keyFunc := func(t *jwt.Token) (any, error) {
		if err := CheckCritical(t.Header); err != nil {
			return nil, err
		}
		var key any
		switch t.Method.(type) {
		case *jwt.SigningMethodHMAC:
			key = hmacKey
		case *jwt.SigningMethodRSA:
			key = rsaKey
		case *jwt.SigningMethodECDSA:
			key = ecdsaKey
		}
		if key == nil {
			return nil, fmt.Errorf("no key for algorithm %s", t.Method.Alg())
		}
		return key, nil
	}
	return &Verifier{parser: jwt.NewParser(opts...), keyFunc: keyFunc, cache: newTokenCache(cfg.ConnectTokenCacheSize), now: time.Now}, nil
}

// VerifyConnectToken verifies a connection token. It returns ErrTokenExpired
// when the token is valid but its exp is in the past, and an error wrapping
// ErrInvalidToken for anything else, including a channel claim. With
// Config.ConnectTokenCacheSize, a token verified before and not yet expired
// is answered from the cache; the result is a copy either way.
func (v *Verifier) VerifyConnectToken(token string) (ConnectToken, error) {
	if v.cache == nil || len(token) > maxCachedTokenLen {
		tok, _, err := v.verifyConnectToken(token)
		return tok, err
	}
	key := tokenKey(token)
	if tok, ok, exp := v.cache.get(key, v.now()); ok {
		return tok, nil
	} else if exp {
		return ConnectToken{}, ErrTokenExpired
	}
	tok, exp, err := v.verifyConnectToken(token)
	if err != nil {
		return ConnectToken{}, err
	}
	v.cache.put(key, tok, exp)
	return tok, nil
}

// verifyConnectToken does the full check; exp is the token's exp claim, the
// zero time when it has none.
func (v *Verifier) verifyConnectToken(token string) (_ ConnectToken, exp time.Time, _ error) {
	var c connectClaims
	if err := v.parse(token, &c); err != nil {
		return ConnectToken{}, time.Time{}, err
	}
	ct, err := c.token()
	if err != nil {
		return ConnectToken{}, time.Time{}, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	if e := c.ExpiresAt.jwt(); e != nil {
		if expired(e) {
			return ConnectToken{}, time.Time{}, ErrTokenExpired
		}
		exp = e.Time
	}
	return ct, exp, nil
}

// VerifySubscribeToken verifies a subscription token, which must carry a
// non-empty channel claim. Errors are as for VerifyConnectToken.
func (v *Verifier) VerifySubscribeToken(token string) (SubscribeToken, error) {
	var c subscribeClaims
	if err := v.parse(token, &c); err != nil {
		return SubscribeToken{}, err
	}
	st, err := c.token()
	if err != nil {
		return SubscribeToken{}, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	if expired(c.ExpiresAt.jwt()) {
		return SubscribeToken{}, ErrTokenExpired
	}
	return st, nil
}

// parse decodes the claims, checks algorithm and signature, then nbf, aud
// and iss. exp is deliberately left to the caller (see GetExpirationTime).
func (v *Verifier) parse(token string, claims jwt.Claims) error {
	if v.parser == nil {
		return fmt.Errorf("%w: %v", ErrInvalidToken, errNoKey)
	}
	if _, err := v.parser.ParseWithClaims(token, claims, v.keyFunc); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	return nil
}

// expired matches golang-jwt's rule (valid while now < exp) with no leeway.
func expired(exp *jwt.NumericDate) bool {
	return exp != nil && !time.Now().Before(exp.Time)
}
