package auth_test

import (
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// TestCriticalHeaderRefused: RFC 7515 section 4.1.11 requires a recipient
// to reject a JWS whose "crit" header names an extension it does not
// understand; Herald understands none, so any crit header (well formed or
// not) makes the token invalid, connection and subscription tokens alike.
func TestCriticalHeaderRefused(t *testing.T) {
	v := hmacVerifier(t)
	for name, crit := range map[string]any{
		"unknown extension": []string{"x-herald-unknown"},
		"registered name":   []string{"exp"},
		"empty list":        []string{},
		"not a list":        "b64",
	} {
		t.Run(name, func(t *testing.T) {
			for _, claims := range []jwt.MapClaims{
				{"sub": "u", "exp": inAnHour()},
				{"sub": "u", "channel": "news", "exp": inAnHour()},
			} {
				tok := jwt.NewWithClaims(jwt.SigningMethodHS256, claims)
				tok.Header["crit"] = crit
				s, err := tok.SignedString([]byte(testSecret))
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := claims["channel"]; ok {
					_, err = v.VerifySubscribeToken(s)
				} else {
					_, err = v.VerifyConnectToken(s)
				}
				wantInvalid(t, err)
			}
		})
	}
	// Without crit the same token is accepted.
	if _, err := v.VerifyConnectToken(hs256(t, jwt.MapClaims{"sub": "u", "exp": inAnHour()})); err != nil {
		t.Fatalf("token without crit: %v", err)
	}
}
