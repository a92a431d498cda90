package auth

import "testing"

// FuzzParseJWKS: whatever an endpoint answers, parsing returns keys or an
// error, never a panic, and every key it returns can be looked up by kid
// and is a public signature key.
func FuzzParseJWKS(f *testing.F) {
	for _, seed := range []string{
		`{"keys":[]}`,
		`{"keys":[{"kty":"RSA","kid":"a","n":"AQAB","e":"AQAB"}]}`,
		`{"keys":[{"kty":"EC","kid":"b","crv":"P-256","x":"AAAA","y":"AAAA"}]}`,
		`{"keys":[{"kty":"oct","kid":"c","k":"AAAA"},{"kty":"OKP","kid":"d","crv":"Ed25519","x":"AAAA"}]}`,
		`{"keys":[null,1,"x",{}]}`,
		`{"keys":{}}`,
		`[]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		keys, err := parseJWKS(body)
		if err != nil {
			if keys != nil {
				t.Fatalf("keys %v with error %v", keys, err)
			}
			return
		}
		for kid, k := range keys {
			if kid == "" || kid != k.KeyID || !k.IsPublic() || unusable(k) != "" {
				t.Fatalf("returned key %q: %+v", kid, k)
			}
		}
	})
}
