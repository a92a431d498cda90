package auth

import (
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Signer mints tokens for tests and the `herald token` command. It is
// immutable and safe for concurrent use.
type Signer struct {
	method jwt.SigningMethod
	key    any
}

// NewHMACSigner returns a Signer for HS256, HS384 or HS512 ("" means HS256).
func NewHMACSigner(secret string, alg string) (*Signer, error) {
	if alg == "" {
		alg = jwt.SigningMethodHS256.Alg()
	}
	m, ok := jwt.GetSigningMethod(alg).(*jwt.SigningMethodHMAC)
	if !ok {
		return nil, fmt.Errorf("auth: HMAC signer: unsupported algorithm %q (want HS256, HS384 or HS512)", alg)
	}
	if secret == "" {
		return nil, errors.New("auth: HMAC signer: empty secret")
	}
	return &Signer{method: m, key: []byte(secret)}, nil
}

// NewSigner returns a Signer for alg. For RS* and ES* key is a PEM private key
// (PKCS#1, SEC 1 or PKCS#8); for HS* it is the shared secret itself.
func NewSigner(alg string, key string) (*Signer, error) {
	switch m := jwt.GetSigningMethod(alg).(type) {
	case *jwt.SigningMethodHMAC:
		return NewHMACSigner(key, alg)
	case *jwt.SigningMethodRSA:
		k, err := jwt.ParseRSAPrivateKeyFromPEM([]byte(key))
		if err != nil {
			return nil, fmt.Errorf("auth: %s signer: parse RSA private key: %w", alg, err)
		}
		return &Signer{method: m, key: k}, nil
	case *jwt.SigningMethodECDSA:
		k, err := jwt.ParseECPrivateKeyFromPEM([]byte(key))
		if err != nil {
			return nil, fmt.Errorf("auth: %s signer: parse ECDSA private key: %w", alg, err)
		}
		if err := checkCurve(alg, k); err != nil {
			return nil, fmt.Errorf("auth: %s signer: %w", alg, err)
		}
		return &Signer{method: m, key: k}, nil
	}
	return nil, fmt.Errorf("auth: unsupported signing algorithm %q (want HS*, RS* or ES* 256/384/512)", alg)
}

func checkCurve(alg string, k *ecdsa.PrivateKey) error {
	want, err := ecdsaAlg(k.Curve)
	if err != nil {
		return err
	}
	if want != alg {
		return fmt.Errorf("key on curve %s can only sign %s", k.Curve.Params().Name, want)
	}
	return nil
}

// Alg reports the signing algorithm, e.g. "HS256".
func (s *Signer) Alg() string { return s.method.Alg() }

// ConnectClaims describe a connection token to mint.
type ConnectClaims struct {
	User      string
	ExpiresAt time.Time // exp; zero means no exp claim
	ExpireAt  *int64    // expire_at; nil means no claim, 0 means never expire
	Info      json.RawMessage
	Channels  []string
	Subs      map[string]SubClaims
	Meta      json.RawMessage
	Audience  string    // aud; "" means no claim
	Issuer    string    // iss; "" means no claim
	ID        string    // jti; "" means no claim (token revocation names it)
	IssuedAt  time.Time // iat; zero means no claim
	Caps      []ChannelCaps
}

// SubClaims describe one entry of a connection token's subs claim.
type SubClaims struct {
	Info     json.RawMessage
	Data     json.RawMessage
	Override *SubOverride
}

// SubscribeClaims describe a subscription token to mint.
type SubscribeClaims struct {
	User      string
	Channel   string
	Client    string // "" means no claim
	ExpiresAt time.Time
	ExpireAt  *int64
	Info      json.RawMessage
	Data      json.RawMessage
	Override  *SubOverride
	Audience  string
	Issuer    string
	ID        string    // jti; "" means no claim
	IssuedAt  time.Time // iat; zero means no claim
	Allow     []string  // allow: sub, pub, hst, prs
}

// ConnectToken signs a connection token.
func (s *Signer) ConnectToken(c ConnectClaims) (string, error) {
	claims := connectClaims{
		registeredClaims: registered(c.User, c.ExpiresAt, c.Audience, c.Issuer).with(c.ID, c.IssuedAt),
		ExpireAt:         c.ExpireAt,
		Info:             c.Info,
		Channels:         c.Channels,
		Meta:             c.Meta,
		Caps:             c.Caps,
	}
	if len(c.Subs) > 0 {
		claims.Subs = make(map[string]subClaim, len(c.Subs))
		for ch, sc := range c.Subs {
			claims.Subs[ch] = subClaim{Info: sc.Info, Data: sc.Data, Override: encodeOverride(sc.Override)}
		}
	}
	return s.sign(&claims)
}

// SubscribeToken signs a subscription token; Channel is required.
func (s *Signer) SubscribeToken(c SubscribeClaims) (string, error) {
	if c.Channel == "" {
		return "", errors.New("auth: subscription token: empty channel")
	}
	claims := subscribeClaims{
		registeredClaims: registered(c.User, c.ExpiresAt, c.Audience, c.Issuer).with(c.ID, c.IssuedAt),
		subClaim:         subClaim{Info: c.Info, Data: c.Data, Override: encodeOverride(c.Override)},
		Channel:          c.Channel,
		Client:           c.Client,
		ExpireAt:         c.ExpireAt,
		Allow:            c.Allow,
	}
	return s.sign(&claims)
}

func (s *Signer) sign(claims jwt.Claims) (string, error) {
	tok, err := jwt.NewWithClaims(s.method, claims).SignedString(s.key)
	if err != nil {
		return "", fmt.Errorf("auth: sign %s token: %w", s.method.Alg(), err)
	}
	return tok, nil
}

func registered(user string, exp time.Time, aud, iss string) registeredClaims {
	rc := registeredClaims{Subject: user, Issuer: iss}
	if !exp.IsZero() {
		rc.ExpiresAt = newNumericDate(jwt.NewNumericDate(exp))
	}
	if aud != "" {
		rc.Audience = jwt.ClaimStrings{aud}
	}
	return rc
}

// with sets the jti and iat claims (none for "" and the zero time).
func (rc registeredClaims) with(id string, iat time.Time) registeredClaims {
	rc.ID = id
	if !iat.IsZero() {
		rc.IssuedAt = newNumericDate(jwt.NewNumericDate(iat))
	}
	return rc
}
