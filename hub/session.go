package hub

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
)

// Emulation sessions are verifiable without a round trip. A session id is
// random bytes followed by a MAC of the node id and those bytes under the
// node's session key, a random key made when the hub starts and told to
// the other nodes in its heartbeats (the control plane, which clients never
// read). Any node can then check that a session named in an emulation
// request was minted by the node it names, and refuse a forged one with no
// engine call: a request that crosses nodes carries a session that its
// node handed to a client in a connect result.

const (
	sessionRandLen = 16
	sessionMACLen  = 16
	sessionKeyLen  = 32
)

// sessionIDLen is the length of a session id as text.
var sessionIDLen = base64.RawURLEncoding.EncodedLen(sessionRandLen + sessionMACLen)

func newSessionKey() []byte {
	k := make([]byte, sessionKeyLen)
	_, _ = rand.Read(k) // crypto/rand.Read never fails since Go 1.24
	return k
}

// sessionMAC is the MAC of a session's random part, bound to its node.
func sessionMAC(key []byte, node string, random []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(node))
	m.Write([]byte{0})
	m.Write(random)
	return m.Sum(nil)[:sessionMACLen]
}

// NewSession returns a new emulation session id for a connection on this
// node (ConnInfo.Session). HandleEmulation, on any node, knows only the
// sessions made here.
func (h *Hub) NewSession() string {
	b := make([]byte, sessionRandLen, sessionRandLen+sessionMACLen)
	_, _ = rand.Read(b)
	b = append(b, sessionMAC(h.sessionKey, h.nodeID, b)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// validSession reports whether session was made by node, whose session
// key is key.
func validSession(key []byte, node, session string) bool {
	if len(key) != sessionKeyLen || len(session) != sessionIDLen {
		return false
	}
	// Strict: one session has one spelling, so that a client cannot
	// multiply its per-session rate limit by respelling the trailing bits.
	b, err := base64.RawURLEncoding.Strict().DecodeString(session)
	if err != nil || len(b) != sessionRandLen+sessionMACLen {
		return false
	}
	return hmac.Equal(b[sessionRandLen:], sessionMAC(key, node, b[:sessionRandLen]))
}
