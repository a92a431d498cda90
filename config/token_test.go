package config

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestTokenSectionsConvertEveryOption: every key of client.token and
// client.subscription_token reaches auth.Config.
func TestTokenSectionsConvertEveryOption(t *testing.T) {
	var c Config
	fillFields(t, reflect.ValueOf(&c.Client.Token.TokenKeys).Elem())
	fillFields(t, reflect.ValueOf(&c.Client.Token.TokenCacheConfig).Elem())
	for _, k := range []*TokenKeys{&c.Client.Token.TokenKeys} {
		for _, until := range []*string{&k.HMACPreviousSecretKeyValidUntil, &k.RSAPreviousPublicKeyValidUntil, &k.ECDSAPreviousPublicKeyValidUntil} {
			*until = "2026-12-01T00:00:00Z"
		}
	}
	c.Client.SubscriptionToken.TokenKeys = c.Client.Token.TokenKeys
	// InsecureSkipSignatureVerify is client-wide: TokenVerifiers sets it
	// from client.insecure_skip_token_signature_verify.
	requireSetExcept(t, "auth.Config", reflect.ValueOf(c.Client.Token.Auth()), "InsecureSkipSignatureVerify")
	requireSetExcept(t, "auth.Config", reflect.ValueOf(c.Client.SubscriptionToken.Auth()), "ConnectTokenCacheSize", "InsecureSkipSignatureVerify")
}

func TestTokenSections(t *testing.T) {
	cfg, err := Parse([]byte(`
client:
  token:
    hmac_secret_key: "0123456789abcdef0123456789abcdef"
    hmac_previous_secret_key: "fedcba9876543210fedcba9876543210"
    hmac_previous_secret_key_valid_until: "2030-01-01T00:00:00Z"
    jwks_public_endpoint: https://idp.example.com/.well-known/jwks.json
    audience_regex: "^herald$"
    issuer: https://idp.example.com/
    user_id_claim: uid
  subscription_token:
    enabled: true
    hmac_secret_key: "abcdef0123456789abcdef0123456789"
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	pair, err := cfg.TokenVerifiers(nil)
	if err != nil || pair == nil {
		t.Fatalf("TokenVerifiers = %v, %v", pair, err)
	}
	if pair.Connect == pair.Subscribe {
		t.Fatal("subscription_token.enabled: subscription tokens must have a verifier of their own")
	}
	cfg.Client.SubscriptionToken = SubscriptionTokenConfig{}
	if pair, _ = cfg.TokenVerifiers(nil); pair.Connect != pair.Subscribe {
		t.Fatal("without subscription_token, subscription tokens are verified with client.token's keys")
	}
	if pair, _ = Default().TokenVerifiers(nil); pair != nil {
		t.Fatalf("no keys: TokenVerifiers = %+v, want nil", pair)
	}
}

// TestTokenSectionProblems: every mistake in the token sections is named
// by its key, once.
func TestTokenSectionProblems(t *testing.T) {
	for name, tc := range map[string]struct {
		yaml string
		want []string
	}{
		"previous without current":     {`client: {token: {hmac_previous_secret_key: x}}`, []string{"client.token.hmac_previous_secret_key"}},
		"rsa previous without current": {`client: {token: {hmac_secret_key: x, rsa_previous_public_key: x}}`, []string{"client.token.rsa_previous_public_key"}},
		"valid_until not a time":       {`client: {token: {hmac_secret_key: x, hmac_previous_secret_key: y, hmac_previous_secret_key_valid_until: tomorrow}}`, []string{"client.token.hmac_previous_secret_key_valid_until"}},
		"valid_until alone":            {`client: {token: {hmac_secret_key: x, ecdsa_previous_public_key_valid_until: "2030-01-01T00:00:00Z"}}`, []string{"client.token.ecdsa_previous_public_key_valid_until"}},
		"audience twice":               {`client: {token: {hmac_secret_key: x, audience: a, audience_regex: a}}`, []string{"client.token.audience_regex"}},
		"issuer twice":                 {`client: {subscription_token: {enabled: true, hmac_secret_key: x, issuer: a, issuer_regex: a}}`, []string{"client.subscription_token.issuer_regex"}},
		"bad regex":                    {`client: {token: {hmac_secret_key: x, issuer_regex: "("}}`, []string{"client.token"}},
		"bad endpoint":                 {`client: {token: {jwks_public_endpoint: "idp.example.com/jwks"}}`, []string{"client.token"}},
		"templated endpoint":           {`client: {token: {jwks_public_endpoint: "https://idp.example.com/{{tenant}}/jwks"}}`, []string{"client.token"}},
		"jwks_tls alone":               {`client: {token: {hmac_secret_key: x, jwks_tls: {ca_file: ca.pem}}}`, []string{"client.token.jwks_tls"}},
		"jwks_tls cert alone":          {`client: {token: {jwks_public_endpoint: "https://idp/jwks", jwks_tls: {cert_file: c.pem}}}`, []string{"client.token.jwks_tls.key_file"}},
		"subscription keys off":        {`client: {token: {hmac_secret_key: x}, subscription_token: {hmac_secret_key: y}}`, []string{"client.subscription_token.enabled"}},
		"subscription no keys":         {`client: {token: {hmac_secret_key: x}, subscription_token: {enabled: true}}`, []string{"client.subscription_token.enabled"}},
		"private key":                  {"client: {token: {rsa_public_key: \"-----BEGIN PRIVATE KEY-----\\nAAAA\\n-----END PRIVATE KEY-----\\n\"}}", []string{"client.token"}},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := Parse([]byte(tc.yaml + "\nhttp_api: {key: 0123456789abcdef0123456789abcdef}\n"))
			if err != nil {
				t.Fatal(err)
			}
			err = cfg.Validate()
			ps, _ := err.(Problems)
			var keys []string
			for _, p := range ps {
				if strings.HasPrefix(p.Key, "client.") {
					keys = append(keys, p.Key)
				}
			}
			if !slices.Equal(keys, tc.want) {
				t.Fatalf("problems %v: keys %q, want %q", err, keys, tc.want)
			}
		})
	}
}

func TestShortSubscriptionSecretWarned(t *testing.T) {
	cfg := Default()
	cfg.Client.Token.JWKSPublicEndpoint = "https://idp.example/jwks"
	cfg.HTTPAPI.Key = strings.Repeat("k", 32)
	cfg.Client.SubscriptionToken.Enabled = true
	cfg.Client.SubscriptionToken.HMACSecretKey = "short"
	if w := strings.Join(cfg.Warnings(), "\n"); !strings.Contains(w, "client.subscription_token.hmac_secret_key is 5 characters long") {
		t.Fatalf("warnings %q", w)
	}
}
