package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Config selects the keys and optional claim checks of a Verifier. An empty
// key field disables the corresponding algorithm family.
type Config struct {
	HMACSecretKey  string // shared secret for HS256/384/512
	RSAPublicKey   string // PEM (PKIX, PKCS#1 or certificate) for RS256/384/512
	ECDSAPublicKey string // PEM (PKIX or certificate) for the ES* matching its curve

	// The previous keys keep tokens signed before a key rotation valid
	// until their ValidUntil (the zero time: for as long as they are
	// configured), next to the current key of the same family.
	HMACPreviousSecretKey            string
	HMACPreviousSecretKeyValidUntil  time.Time
	RSAPreviousPublicKey             string
	RSAPreviousPublicKeyValidUntil   time.Time
	ECDSAPreviousPublicKey           string
	ECDSAPreviousPublicKeyValidUntil time.Time

	// JWKS fetches RS* and ES* keys from an identity provider's JSON Web
	// Key Set; nil without one (see JWKSConfig).
	JWKS *JWKSConfig

	Audience      string // required aud value; checked only when set
	AudienceRegex string // regular expression one aud value must match; not with Audience
	Issuer        string // required iss value; checked only when set
	IssuerRegex   string // regular expression iss must match; not with Issuer
	// UserIDClaim names the claim holding the user ID instead of sub
	// (identity providers often put their own user ID elsewhere); it must
	// be a string when present.
	UserIDClaim string

	// InsecureSkipSignatureVerify accepts tokens without checking their
	// signature (any algorithm, any key, no key configured at all); their
	// claims are still checked. Centrifugo's
	// client.insecure_skip_token_signature_verify: for tests and
	// development only, since anyone can then mint a token for any user.
	InsecureSkipSignatureVerify bool

	// ConnectTokenCacheSize is how many verified connection tokens the
	// Verifier remembers until they expire, so that the same token
	// presented again skips the signature check; 0 turns the cache off.
	ConnectTokenCacheSize int
}

// Configured reports whether c has any key, so that a Verifier built
// from it can accept a token.
func (c Config) Configured() bool {
	return c.HMACSecretKey != "" || c.RSAPublicKey != "" || c.ECDSAPublicKey != "" || c.JWKS != nil
}

// parseRSAPublicKey wraps golang-jwt's parser with a friendlier message for
// the common mistake of pasting the private key.
func parseRSAPublicKey(text string) (*rsa.PublicKey, error) {
	if err := checkPublicPEM(text); err != nil {
		return nil, err
	}
	key, err := jwt.ParseRSAPublicKeyFromPEM([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("parse RSA public key: %w", err)
	}
	return key, nil
}

func parseECDSAPublicKey(text string) (*ecdsa.PublicKey, string, error) {
	if err := checkPublicPEM(text); err != nil {
		return nil, "", err
	}
	key, err := jwt.ParseECPublicKeyFromPEM([]byte(text))
	if err != nil {
		return nil, "", fmt.Errorf("parse ECDSA public key: %w", err)
	}
	alg, err := ecdsaAlg(key.Curve)
	if err != nil {
		return nil, "", err
	}
	return key, alg, nil
}

func checkPublicPEM(text string) error {
	block, _ := pem.Decode([]byte(text))
	if block == nil {
		return errors.New("no PEM block found (expected -----BEGIN PUBLIC KEY-----)")
	}
	if strings.Contains(block.Type, "PRIVATE KEY") {
		return fmt.Errorf("PEM block is %q; configure the public key, not the private key", block.Type)
	}
	return nil
}

// ecdsaAlg returns the single JWS algorithm RFC 7518 pairs with a curve.
// Accepting other ES* algorithms with the key would only let through tokens
// that no conforming signer produces.
func ecdsaAlg(curve elliptic.Curve) (string, error) {
	switch curve {
	case elliptic.P256():
		return jwt.SigningMethodES256.Alg(), nil
	case elliptic.P384():
		return jwt.SigningMethodES384.Alg(), nil
	case elliptic.P521():
		return jwt.SigningMethodES512.Alg(), nil
	}
	return "", fmt.Errorf("unsupported curve %s (ES256 needs P-256, ES384 P-384, ES512 P-521)", curve.Params().Name)
}
