package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/prometheus/client_golang/prometheus"
)

var errNoKey = errors.New("no token key configured")

// Verifier checks connection and subscription tokens against the keys of a
// Config. It is immutable after NewVerifier (but for the JWKS cache, which
// has its own lock) and safe for concurrent use.
type Verifier struct {
	// parser is nil when no key is configured; every token is then rejected.
	parser      *jwt.Parser
	keyFunc     jwt.Keyfunc
	cache       *tokenCache // nil when off
	now         func() time.Time
	audRegex    *regexp.Regexp // nil when not configured
	issRegex    *regexp.Regexp
	userIDClaim string
	jwks        *jwks // nil without JWKS
	// noSig, set with InsecureSkipSignatureVerify, checks what parser
	// would but the signature.
	noSig *jwt.Validator
	// cacheUntil is when the earliest previous key stops being valid: a
	// token verified with it must not outlive it in the cache. Zero: no
	// such bound.
	cacheUntil time.Time
}

// keyFamily holds the current key of an algorithm family and the previous
// one during a rotation.
type keyFamily struct {
	current       any // nil when the family is off
	previous      any // nil when none
	previousUntil time.Time
	both          any // the key set of current and previous, boxed once
}

// withBoth fills f.both, so that verifying with both keys does not
// allocate per token.
func (f keyFamily) withBoth() keyFamily {
	if f.current != nil && f.previous != nil {
		f.both = jwt.VerificationKeySet{Keys: []jwt.VerificationKey{f.current, f.previous}}
	}
	return f
}

// key returns what golang-jwt verifies with: the current key alone, or
// both keys while the previous one is still valid.
func (f keyFamily) key(now time.Time) any {
	if f.both == nil || (!f.previousUntil.IsZero() && !now.Before(f.previousUntil)) {
		return f.current
	}
	return f.both
}

// NewVerifier parses the configured keys once. An error names the Config
// field that holds the faulty key. A Config without any key is accepted and
// yields a Verifier that rejects every token. With a JWKS endpoint nothing
// is fetched here: the first token that needs a key fetches the set.
func NewVerifier(cfg Config) (*Verifier, error) {
	var (
		methods     []string
		hmac        keyFamily
		rsaKeys     keyFamily
		ecdsaKeys   keyFamily
		ecdsaPrevAl string
	)
	if cfg.ConnectTokenCacheSize < 0 {
		return nil, fmt.Errorf("auth: ConnectTokenCacheSize %d: must not be negative", cfg.ConnectTokenCacheSize)
	}
	if cfg.HMACPreviousSecretKey != "" && cfg.HMACSecretKey == "" {
		return nil, errors.New("auth: HMACPreviousSecretKey: needs HMACSecretKey, the key that replaces it")
	}
	if cfg.RSAPreviousPublicKey != "" && cfg.RSAPublicKey == "" {
		return nil, errors.New("auth: RSAPreviousPublicKey: needs RSAPublicKey, the key that replaces it")
	}
	if cfg.ECDSAPreviousPublicKey != "" && cfg.ECDSAPublicKey == "" {
		return nil, errors.New("auth: ECDSAPreviousPublicKey: needs ECDSAPublicKey, the key that replaces it")
	}
	if cfg.HMACSecretKey != "" {
		hmac.current = []byte(cfg.HMACSecretKey)
		methods = append(methods, "HS256", "HS384", "HS512")
		if cfg.HMACPreviousSecretKey != "" {
			hmac.previous, hmac.previousUntil = []byte(cfg.HMACPreviousSecretKey), cfg.HMACPreviousSecretKeyValidUntil
		}
	}
	if cfg.RSAPublicKey != "" {
		key, err := parseRSAPublicKey(cfg.RSAPublicKey)
		if err != nil {
			return nil, fmt.Errorf("auth: RSAPublicKey: %w", err)
		}
		rsaKeys.current = key
		methods = append(methods, "RS256", "RS384", "RS512")
		if cfg.RSAPreviousPublicKey != "" {
			prev, err := parseRSAPublicKey(cfg.RSAPreviousPublicKey)
			if err != nil {
				return nil, fmt.Errorf("auth: RSAPreviousPublicKey: %w", err)
			}
			rsaKeys.previous, rsaKeys.previousUntil = prev, cfg.RSAPreviousPublicKeyValidUntil
		}
	}
	if cfg.ECDSAPublicKey != "" {
		key, alg, err := parseECDSAPublicKey(cfg.ECDSAPublicKey)
		if err != nil {
			return nil, fmt.Errorf("auth: ECDSAPublicKey: %w", err)
		}
		ecdsaKeys.current = key
		methods = append(methods, alg)
		if cfg.ECDSAPreviousPublicKey != "" {
			prev, palg, err := parseECDSAPublicKey(cfg.ECDSAPreviousPublicKey)
			if err != nil {
				return nil, fmt.Errorf("auth: ECDSAPreviousPublicKey: %w", err)
			}
			if palg != alg {
				// Both keys verify the family's tokens; a different
				// curve means a different algorithm, which golang-jwt's
				// key set cannot tell apart from a bad signature.
				ecdsaPrevAl = palg
			}
			ecdsaKeys.previous, ecdsaKeys.previousUntil = prev, cfg.ECDSAPreviousPublicKeyValidUntil
		}
	}
	if ecdsaPrevAl != "" {
		return nil, fmt.Errorf("auth: ECDSAPreviousPublicKey: its curve is for %s, the current key's for %s; rotate within one curve", ecdsaPrevAl, methods[len(methods)-1])
	}
	var set *jwks
	if cfg.JWKS != nil {
		if err := cfg.JWKS.check(); err != nil {
			return nil, fmt.Errorf("auth: JWKS: %w", err)
		}
		set = newJWKS(*cfg.JWKS)
		for _, m := range []string{"RS256", "RS384", "RS512", "ES256", "ES384", "ES512"} {
			if !slices.Contains(methods, m) {
				methods = append(methods, m)
			}
		}
	}
	if cfg.Audience != "" && cfg.AudienceRegex != "" {
		return nil, errors.New("auth: Audience and AudienceRegex: configure one of them")
	}
	if cfg.Issuer != "" && cfg.IssuerRegex != "" {
		return nil, errors.New("auth: Issuer and IssuerRegex: configure one of them")
	}
	hmac, rsaKeys, ecdsaKeys = hmac.withBoth(), rsaKeys.withBoth(), ecdsaKeys.withBoth()
	v := &Verifier{userIDClaim: cfg.UserIDClaim, jwks: set, now: time.Now}
	var err error
	if v.audRegex, err = compileClaimRegex(cfg.AudienceRegex); err != nil {
		return nil, fmt.Errorf("auth: AudienceRegex: %w", err)
	}
	if v.issRegex, err = compileClaimRegex(cfg.IssuerRegex); err != nil {
		return nil, fmt.Errorf("auth: IssuerRegex: %w", err)
	}
	for _, f := range []keyFamily{hmac, rsaKeys, ecdsaKeys} {
		if f.previous != nil && !f.previousUntil.IsZero() && (v.cacheUntil.IsZero() || f.previousUntil.Before(v.cacheUntil)) {
			v.cacheUntil = f.previousUntil
		}
	}
	if len(methods) == 0 && !cfg.InsecureSkipSignatureVerify {
		return v, nil
	}

	var opts []jwt.ParserOption
	if len(methods) > 0 {
		opts = append(opts, jwt.WithValidMethods(methods))
	}
	if cfg.Audience != "" {
		opts = append(opts, jwt.WithAudience(cfg.Audience))
	}
	if cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(cfg.Issuer))
	}
	// The key is chosen by the method's family, never by anything else in the
	// header, so an HS token can only ever be checked against the HMAC secret
	// (this is what defeats the RSA-public-key-as-HMAC-secret confusion).
	// Within the RS and ES families, a token naming a kid is checked with
	// that key of the JWKS when one is configured, else with the
	// configured PEM keys.
	v.keyFunc = func(t *jwt.Token) (any, error) {
		if err := CheckCritical(t.Header); err != nil {
			return nil, err
		}
		var f keyFamily
		switch t.Method.(type) {
		case *jwt.SigningMethodHMAC:
			f = hmac
		case *jwt.SigningMethodRSA:
			f = rsaKeys
		case *jwt.SigningMethodECDSA:
			f = ecdsaKeys
		}
		if _, hs := t.Method.(*jwt.SigningMethodHMAC); !hs && set != nil {
			if kid, ok := t.Header["kid"].(string); ok && kid != "" {
				k, err := set.key(kid)
				if err != nil {
					return nil, err
				}
				return verificationKey(k, t.Method.Alg())
			}
			if f.current == nil {
				return nil, fmt.Errorf("%s token without a kid header: the JWKS key is chosen by kid", t.Method.Alg())
			}
		}
		key := f.key(v.now())
		if key == nil {
			return nil, fmt.Errorf("no key for algorithm %s", t.Method.Alg())
		}
		return key, nil
	}
	v.parser = jwt.NewParser(opts...)
	if cfg.InsecureSkipSignatureVerify {
		v.noSig = jwt.NewValidator(opts...)
	}
	v.cache = newTokenCache(cfg.ConnectTokenCacheSize)
	return v, nil
}

// compileClaimRegex compiles an aud or iss pattern; "" means none.
func compileClaimRegex(expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, nil
	}
	return regexp.Compile(expr)
}

// Collectors are the Verifier's Prometheus metrics (those of its JWKS);
// none without JWKS.
func (v *Verifier) Collectors() []prometheus.Collector {
	if v.jwks == nil {
		return nil
	}
	return v.jwks.metrics.collectors()
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
	now := v.now()
	if tok, ok, exp := v.cache.get(key, now); ok {
		return tok, nil
	} else if exp {
		return ConnectToken{}, ErrTokenExpired
	}
	tok, exp, err := v.verifyConnectToken(token)
	if err != nil {
		return ConnectToken{}, err
	}
	// Until the previous keys stop being valid, an entry may have been
	// verified with one of them and is checked again from then on.
	until := v.cacheUntil
	if !until.After(now) {
		until = time.Time{}
	}
	v.cache.put(key, tok, exp, until)
	return tok, nil
}

// verifyConnectToken does the full check; exp is the token's exp claim, the
// zero time when it has none.
func (v *Verifier) verifyConnectToken(token string) (_ ConnectToken, exp time.Time, _ error) {
	var c connectClaims
	if err := v.parse(token, &c, &c.registeredClaims); err != nil {
		return ConnectToken{}, time.Time{}, err
	}
	ct, err := c.token()
	if err != nil {
		return ConnectToken{}, time.Time{}, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	ct.ID, ct.IssuedAt = c.identity()
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
	if err := v.parse(token, &c, &c.registeredClaims); err != nil {
		return SubscribeToken{}, err
	}
	st, err := c.token()
	if err != nil {
		return SubscribeToken{}, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	st.ID, st.IssuedAt = c.identity()
	if expired(c.ExpiresAt.jwt()) {
		return SubscribeToken{}, ErrTokenExpired
	}
	return st, nil
}

// parse decodes the claims, checks algorithm and signature, then nbf, aud
// and iss, and replaces the subject with the user ID claim when one is
// configured. exp is deliberately left to the caller (see
// GetExpirationTime). reg is the registered part of claims.
func (v *Verifier) parse(token string, claims jwt.Claims, reg *registeredClaims) error {
	if v.parser == nil {
		return fmt.Errorf("%w: %v", ErrInvalidToken, errNoKey)
	}
	if v.noSig != nil {
		// As Centrifugo v6.9.1 (jwtverify: ParseNoVerify, then the
		// claims): decoded, not verified.
		if _, _, err := v.parser.ParseUnverified(token, claims); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidToken, err)
		}
		if err := v.noSig.Validate(claims); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidToken, err)
		}
	} else if _, err := v.parser.ParseWithClaims(token, claims, v.keyFunc); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	if v.issRegex != nil && !v.issRegex.MatchString(reg.Issuer) {
		return fmt.Errorf("%w: iss %q does not match %s", ErrInvalidToken, reg.Issuer, v.issRegex)
	}
	if v.audRegex != nil && !slices.ContainsFunc(reg.Audience, v.audRegex.MatchString) {
		return fmt.Errorf("%w: no aud value (%q) matches %s", ErrInvalidToken, []string(reg.Audience), v.audRegex)
	}
	if v.userIDClaim != "" {
		user, err := v.userID(token)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidToken, err)
		}
		reg.Subject = user
	}
	return nil
}

// userID reads the configured user ID claim of a token whose signature
// has been verified. An absent claim is an anonymous user, as an absent
// sub is; anything but a string is refused rather than turned into one.
func (v *Verifier) userID(token string) (string, error) {
	_, rest, _ := strings.Cut(token, ".")
	payload, _, _ := strings.Cut(rest, ".")
	b, err := v.parser.DecodeSegment(payload)
	if err != nil {
		return "", err
	}
	var claims map[string]json.RawMessage
	if err := json.Unmarshal(b, &claims); err != nil {
		return "", err
	}
	raw, ok := claims[v.userIDClaim]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var user string
	if err := json.Unmarshal(raw, &user); err != nil {
		return "", fmt.Errorf("user ID claim %q must be a string, got %.32s", v.userIDClaim, raw)
	}
	return user, nil
}

// expired matches golang-jwt's rule (valid while now < exp) with no leeway.
func expired(exp *jwt.NumericDate) bool {
	return exp != nil && !time.Now().Before(exp.Time)
}
