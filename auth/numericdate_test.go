package auth_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// TestNumericDateMustBeANumber: RFC 7519 defines exp, nbf and iat as
// NumericDate, a JSON number. golang-jwt also accepts a string holding a
// number; the Verifier must not, for connection and subscription tokens
// alike, so that no token means something different here than to a
// stricter verifier.
func TestNumericDateMustBeANumber(t *testing.T) {
	v := hmacVerifier(t)
	// As strings, the times would be valid ones: exp in the future, nbf
	// and iat in the past.
	asString := map[string]string{
		"exp": strconv.FormatInt(inAnHour(), 10),
		"nbf": strconv.FormatInt(hourAgo(), 10),
		"iat": strconv.FormatInt(hourAgo(), 10),
	}
	for claim, str := range asString {
		for _, value := range []any{str, "", "soon", true, map[string]any{}} {
			claims := jwt.MapClaims{"sub": "u", claim: value}
			_, err := v.VerifyConnectToken(hs256(t, claims))
			wantInvalid(t, err)
			if !strings.Contains(err.Error(), "NumericDate must be a JSON number") {
				t.Errorf("%s %v: error %q does not say why", claim, value, err)
			}
			claims["channel"] = "c"
			_, err = v.VerifySubscribeToken(hs256(t, claims))
			wantInvalid(t, err)
		}
	}
	// Numbers, fractional ones included, and null (absent) stay valid.
	for _, value := range []any{inAnHour(), float64(inAnHour()) + 0.5, nil} {
		if _, err := v.VerifyConnectToken(hs256(t, jwt.MapClaims{"sub": "u", "exp": value})); err != nil {
			t.Errorf("exp %v: %v", value, err)
		}
	}
}
