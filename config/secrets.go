package config

import "fmt"

// Secrets shorter than these are accepted (a first try often uses
// "change-me") but warned about: anyone who guesses the token key can mint a
// token for any user, and anyone who guesses the API key can publish and
// disconnect users. 32 characters is the 256 bits an HS256 key should have
// when the characters are random hex; `herald config init` writes 64.
const (
	minHMACSecretLen = 32
	minAPIKeyLen     = 32
)

// shortSecretWarnings names every configured secret shorter than its
// minimum, with the key, the length and how to get a good one.
func (c Config) shortSecretWarnings() []string {
	var w []string
	for _, s := range []struct {
		key, value string
		min        int
		why        string
	}{
		{"client.token.hmac_secret_key", c.Client.Token.HMACSecretKey, minHMACSecretLen, "whoever guesses it can sign a connection token for any user"},
		{"client.subscription_token.hmac_secret_key", c.Client.SubscriptionToken.HMACSecretKey, minHMACSecretLen, "whoever guesses it can sign a subscription token to any channel"},
		{"http_api.key", c.HTTPAPI.Key, minAPIKeyLen, "whoever guesses it can publish to any channel and disconnect users"},
		{"grpc_api.key", c.GRPCAPIConfig.Key, minAPIKeyLen, "whoever guesses it can publish to any channel and disconnect users"},
	} {
		if s.value == "" || len(s.value) >= s.min {
			continue
		}
		w = append(w, fmt.Sprintf("%s is %d characters long, shorter than %d: %s; "+
			"use a long random value (`herald config init` writes 64 hex characters, `openssl rand -hex 32` prints one)",
			s.key, len(s.value), s.min, s.why))
	}
	return w
}
