package auth_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"hash"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/heraldhq/herald/auth"
)

// FuzzVerifyToken feeds mutated tokens to a Verifier that holds only an
// HMAC secret. It must never panic, and it may accept a token (valid or
// merely expired) only when the token still carries a correct HMAC of its
// own header and payload, checked here independently of golang-jwt.
func FuzzVerifyToken(f *testing.F) {
	for _, tok := range fuzzSeedTokens(f) {
		f.Add(tok)
	}
	for _, s := range []string{"", ".", "..", "a.b.c", "eyJhbGciOiJub25lIn0.e30.", "eyJhbGciOiJIUzI1NiJ9.e30.\n"} {
		f.Add(s)
	}
	v := hmacVerifier(f)
	f.Fuzz(func(t *testing.T, token string) {
		ct, err := v.VerifyConnectToken(token)
		checkAccepted(t, "connect", token, err)
		if err == nil && ct.ExpireAt < 0 {
			t.Fatalf("connect token %q: negative ExpireAt %d", token, ct.ExpireAt)
		}
		st, err := v.VerifySubscribeToken(token)
		checkAccepted(t, "subscribe", token, err)
		if err == nil && st.Channel == "" {
			t.Fatalf("subscribe token %q accepted without a channel", token)
		}
	})
}

// FuzzVerifyClaims signs arbitrary payloads correctly, so the fuzzer gets
// past the signature check and exercises the claim decoding. Nothing may
// panic, and whatever is accepted agrees with encoding/json on the
// subject and the channel.
func FuzzVerifyClaims(f *testing.F) {
	for _, tok := range fuzzSeedTokens(f) {
		parts := strings.Split(tok, ".")
		payload, err := base64.RawURLEncoding.DecodeString(parts[1])
		if err != nil {
			f.Fatal(err)
		}
		f.Add(payload)
	}
	for _, s := range []string{
		`{}`, `null`, `[]`, `{"sub":1}`, `{"exp":"soon"}`, `{"channel":"c","b64info":"!!"}`,
		`{"subs":{"c":{"b64data":"@"}}}`, `{"expire_at":-5}`, `{"aud":[1]}`, `{"info":null,"meta":null}`,
	} {
		f.Add([]byte(s))
	}
	v := hmacVerifier(f)
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		input := header + "." + base64.RawURLEncoding.EncodeToString(payload)
		mac := hmac.New(sha256.New, []byte(testSecret))
		mac.Write([]byte(input))
		token := input + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))

		var want struct {
			Sub     string `json:"sub"`
			Channel string `json:"channel"`
		}
		ct, err := v.VerifyConnectToken(token)
		if err == nil {
			if json.Unmarshal(payload, &want) != nil || ct.User != want.Sub || want.Channel != "" {
				t.Fatalf("connect claims %q accepted as %+v", payload, ct)
			}
			if ct.ExpireAt < 0 {
				t.Fatalf("connect claims %q: negative ExpireAt %d", payload, ct.ExpireAt)
			}
		}
		st, err := v.VerifySubscribeToken(token)
		if err == nil {
			if json.Unmarshal(payload, &want) != nil || st.User != want.Sub || st.Channel != want.Channel || st.Channel == "" {
				t.Fatalf("subscribe claims %q accepted as %+v", payload, st)
			}
			if st.ExpireAt < 0 {
				t.Fatalf("subscribe claims %q: negative ExpireAt %d", payload, st.ExpireAt)
			}
		}
	})
}

// fuzzSeedTokens are real tokens of every kind the tests use: signed by
// the package's Signer with each HMAC algorithm, with and without the
// optional claims, expired, and signed with golang-jwt directly.
func fuzzSeedTokens(tb testing.TB) []string {
	tb.Helper()
	exp := int64(0)
	yes := true
	future := time.Now().Add(time.Hour)
	var out []string
	for _, alg := range []string{"HS256", "HS384", "HS512"} {
		s, err := auth.NewHMACSigner(testSecret, alg)
		if err != nil {
			tb.Fatal(err)
		}
		ct, err := s.ConnectToken(auth.ConnectClaims{
			User: "u1", ExpiresAt: future, ExpireAt: &exp, Info: json.RawMessage(`{"name":"a"}`),
			Channels: []string{"news"}, Meta: json.RawMessage(`[1]`),
			Subs: map[string]auth.SubClaims{"c": {Info: json.RawMessage(`1`), Override: &auth.SubOverride{Presence: &yes}}},
		})
		if err != nil {
			tb.Fatal(err)
		}
		st, err := s.SubscribeToken(auth.SubscribeClaims{
			User: "u1", Channel: "news", Client: "cl", ExpiresAt: future, Data: json.RawMessage(`"d"`),
		})
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, ct, st)
	}
	out = append(out,
		hs256(tb, jwt.MapClaims{"sub": "u2"}),
		hs256(tb, jwt.MapClaims{"sub": "u2", "exp": time.Now().Add(-time.Hour).Unix()}),
		hs256(tb, jwt.MapClaims{"sub": "u2", "channel": "c", "b64info": "AAE=", "b64data": "AQ=="}),
		hs256(tb, jwt.MapClaims{"sub": "u2", "nbf": time.Now().Add(time.Hour).Unix()}),
		signRaw(tb, jwt.SigningMethodHS512, []byte("another-secret"), jwt.MapClaims{"sub": "u3"}),
	)
	return out
}

// checkAccepted fails the test when the Verifier accepted token (err is
// nil or ErrTokenExpired, which is only reported for otherwise valid
// tokens) although it is not correctly signed with the test secret.
func checkAccepted(t *testing.T, kind, token string, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, auth.ErrTokenExpired) {
		if !errors.Is(err, auth.ErrInvalidToken) {
			t.Fatalf("%s token %q: error %v is neither ErrInvalidToken nor ErrTokenExpired", kind, token, err)
		}
		return
	}
	if !signedWithTestSecret(token) {
		t.Fatalf("%s token %q accepted (error %v) without a valid HMAC signature", kind, token, err)
	}
}

// signedWithTestSecret reports whether token is header.payload.signature
// whose header names an HMAC algorithm and whose signature is that HMAC
// of "header.payload" under testSecret. Segments decode as golang-jwt
// decodes them by default (unpadded base64url, which skips \r and \n).
func signedWithTestSecret(token string) bool {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return false
	}
	rawHeader, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return false
	}
	var header struct {
		Alg string `json:"alg"`
	}
	if json.Unmarshal(rawHeader, &header) != nil {
		return false
	}
	var h func() hash.Hash
	switch header.Alg {
	case "HS256":
		h = sha256.New
	case "HS384":
		h = sha512.New384
	case "HS512":
		h = sha512.New
	default:
		return false
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return false
	}
	mac := hmac.New(h, []byte(testSecret))
	mac.Write([]byte(parts[0] + "." + parts[1]))
	return hmac.Equal(sig, mac.Sum(nil))
}
