package main

import (
	"crypto/rand"
	"encoding/hex"
)

// randomKey returns 32 bytes from crypto/rand in hex: 256 bits, enough for
// an HS256 secret, and plain characters that need no quoting in a shell,
// a header or YAML (the caller still quotes it in YAML, so an all-digit
// key stays a string).
func randomKey() string {
	// crypto/rand.Read never returns an error (it crashes the program
	// if the system's source fails), so there is nothing to handle.
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// generatedKeys are the secrets `herald serve` makes up for one run and
// `herald config init` writes to a file.
type generatedKeys struct {
	HMACSecret string // client.token.hmac_secret_key
	APIKey     string // http_api.key
}

func newGeneratedKeys() generatedKeys {
	return generatedKeys{HMACSecret: randomKey(), APIKey: randomKey()}
}
