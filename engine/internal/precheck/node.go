package precheck

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// MaxNodeID bounds a node id, in bytes: it is part of connection names
// and log lines, and it travels in every targeted control message.
const MaxNodeID = 64

// NodeID returns id, or a random id when id is empty, and refuses an id
// that is too long or holds bytes that do not print.
func NodeID(id string) (string, error) {
	if id == "" {
		b := make([]byte, 8)
		_, _ = rand.Read(b) // crypto/rand.Read never fails since Go 1.24
		return hex.EncodeToString(b), nil
	}
	if len(id) > MaxNodeID {
		return "", fmt.Errorf("node id %q: longer than %d bytes", id, MaxNodeID)
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] >= 0x7f {
			return "", fmt.Errorf("node id %q: byte %d is not a printable ASCII character", id, i)
		}
	}
	return id, nil
}

// NodeToken names a node's own control channel (a PostgreSQL LISTEN
// channel, a NATS subject token): a fixed-length digest of its id, so any
// id fits the systems' name rules and length limits.
func NodeToken(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:10])
}
