package hub

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/protocol"
)

// SharedPollConfig holds the keys that sign the key batches clients track
// on shared poll channels. The names are Centrifugo's top-level
// shared_poll section (internal/configtypes/types.go, SharedPoll).
type SharedPollConfig struct {
	HMACSecretKey                   string `yaml:"hmac_secret_key" doc:"the secret the application signs tracked key batches with (HMAC-SHA256, see [protocol.md](protocol.md#shared-poll-subscriptions)); required when a namespace has 'subscription_type: shared_poll'"`
	HMACPreviousSecretKey           string `yaml:"hmac_previous_secret_key" doc:"the secret being rotated out: batches signed with it are accepted too, if issued ('iat') no later than 'hmac_previous_secret_key_valid_until'"`
	HMACPreviousSecretKeyValidUntil int64  `yaml:"hmac_previous_secret_key_valid_until" defaultdoc:"no limit" doc:"Unix time in seconds: batches signed with 'hmac_previous_secret_key' and issued after it are refused (0: no limit)"`
}

// trackSignatureGrace is the clock skew allowed past a signature's
// expiry, Centrifugo 6.9.1's gracePeriodSeconds
// (internal/client/track_signature.go).
const trackSignatureGrace = 5

// verifyTrack checks the signature of one batch of keys tracked by user in
// channel and returns its expiry (Unix seconds, 0 for none), or error 103
// for a signature made with neither key, 109 for an expired one.
//
// The signature is "IAT:EXPIRY:HEX", HEX the lowercase hex HMAC-SHA256 of
// IAT, EXPIRY, user, channel and the hex SHA-256 of the keys joined with
// NUL, separated by NUL (NUL, not ':', so that a ':' in a user or channel
// name cannot move between fields).
func (c SharedPollConfig) verifyTrack(channel, user, sig string, keys []string, now time.Time) (int64, *Error) {
	iatText, rest, ok := strings.Cut(sig, ":")
	if !ok {
		return 0, newError(protocol.ErrorPermissionDenied)
	}
	expText, mac, ok := strings.Cut(rest, ":")
	if !ok {
		return 0, newError(protocol.ErrorPermissionDenied)
	}
	iat, err1 := strconv.ParseInt(iatText, 10, 64)
	exp, err2 := strconv.ParseInt(expText, 10, 64)
	if err1 != nil || err2 != nil || c.HMACSecretKey == "" {
		return 0, newError(protocol.ErrorPermissionDenied)
	}
	valid := hmac.Equal([]byte(mac), []byte(trackMAC(c.HMACSecretKey, iatText, expText, user, channel, keys)))
	if !valid && c.HMACPreviousSecretKey != "" &&
		(c.HMACPreviousSecretKeyValidUntil <= 0 || iat <= c.HMACPreviousSecretKeyValidUntil) {
		valid = hmac.Equal([]byte(mac), []byte(trackMAC(c.HMACPreviousSecretKey, iatText, expText, user, channel, keys)))
	}
	if !valid {
		return 0, newError(protocol.ErrorPermissionDenied)
	}
	if exp > 0 && exp+trackSignatureGrace < now.Unix() {
		return 0, newError(protocol.ErrorTokenExpired)
	}
	return exp, nil
}

// trackMAC is the HEX part of a track signature.
func trackMAC(secret, iatText, expText, user, channel string, keys []string) string {
	keysHash := sha256.Sum256([]byte(strings.Join(keys, "\x00")))
	m := hmac.New(sha256.New, []byte(secret))
	for _, part := range []string{iatText, expText, user, channel} {
		m.Write([]byte(part))
		m.Write([]byte{0})
	}
	m.Write([]byte(hex.EncodeToString(keysHash[:])))
	return hex.EncodeToString(m.Sum(nil))
}

// SignTrack makes the signature of a key batch that verifyTrack accepts,
// for applications written in Go and for tests: issued at iat, valid until
// exp (Unix seconds).
func SignTrack(secret, channel, user string, keys []string, iat, exp int64) string {
	iatText, expText := strconv.FormatInt(iat, 10), strconv.FormatInt(exp, 10)
	return iatText + ":" + expText + ":" + trackMAC(secret, iatText, expText, user, channel, keys)
}
