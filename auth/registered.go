package auth

import (
	"fmt"

	"github.com/golang-jwt/jwt/v5"
)

// registeredClaims holds the registered claims of RFC 7519 as
// jwt.RegisteredClaims does, but decodes exp, nbf and iat strictly (see
// numericDate).
type registeredClaims struct {
	Issuer    string           `json:"iss,omitempty"`
	Subject   string           `json:"sub,omitempty"`
	Audience  jwt.ClaimStrings `json:"aud,omitempty"`
	ExpiresAt *numericDate     `json:"exp,omitempty"`
	NotBefore *numericDate     `json:"nbf,omitempty"`
	IssuedAt  *numericDate     `json:"iat,omitempty"`
	ID        string           `json:"jti,omitempty"`
}

// identity is the token's jti and iat (Unix seconds, 0 without one),
// which revocation checks.
func (c registeredClaims) identity() (id string, issuedAt int64) {
	if t := c.IssuedAt.jwt(); t != nil {
		issuedAt = t.Unix()
	}
	return c.ID, issuedAt
}

// GetExpirationTime implements jwt.Claims.
func (c registeredClaims) GetExpirationTime() (*jwt.NumericDate, error) {
	return c.ExpiresAt.jwt(), nil
}

// GetNotBefore implements jwt.Claims.
func (c registeredClaims) GetNotBefore() (*jwt.NumericDate, error) { return c.NotBefore.jwt(), nil }

// GetIssuedAt implements jwt.Claims.
func (c registeredClaims) GetIssuedAt() (*jwt.NumericDate, error) { return c.IssuedAt.jwt(), nil }

// GetAudience implements jwt.Claims.
func (c registeredClaims) GetAudience() (jwt.ClaimStrings, error) { return c.Audience, nil }

// GetIssuer implements jwt.Claims.
func (c registeredClaims) GetIssuer() (string, error) { return c.Issuer, nil }

// GetSubject implements jwt.Claims.
func (c registeredClaims) GetSubject() (string, error) { return c.Subject, nil }

// numericDate is a NumericDate that must be a JSON number, as RFC 7519
// section 2 defines it. jwt.NumericDate also accepts a string holding a
// number ("exp":"1700000000"), which other verifiers refuse; accepting it
// would let one token mean different things to different services.
type numericDate struct{ jwt.NumericDate }

func newNumericDate(d *jwt.NumericDate) *numericDate {
	if d == nil {
		return nil
	}
	return &numericDate{*d}
}

// UnmarshalJSON refuses anything but a number. null never gets here: the
// decoder leaves a pointer field nil for it.
func (d *numericDate) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || (b[0] != '-' && (b[0] < '0' || b[0] > '9')) {
		return fmt.Errorf("NumericDate must be a JSON number of seconds, got %.32s", b)
	}
	return d.NumericDate.UnmarshalJSON(b)
}

// jwt returns d as golang-jwt's type; nil stays nil.
func (d *numericDate) jwt() *jwt.NumericDate {
	if d == nil {
		return nil
	}
	return &d.NumericDate
}
