package admin

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"sync"
	"time"
)

// Sessions are kept in memory: a session is good on the node that issued
// it, until it expires, the operator logs out or the node restarts.

// maxSessions bounds the sessions kept at once; the oldest go first. Login
// is rate-limited, so only many operators reach it.
const maxSessions = 1024

type session struct {
	csrf    string
	expires time.Time
}

type sessions struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[string]session
}

func newSessions(ttl time.Duration) *sessions {
	return &sessions{ttl: ttl, m: make(map[string]session)}
}

// randomToken returns 32 random bytes, URL-safe.
func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// create starts a session and returns its id and CSRF token.
func (s *sessions) create() (id string, sess session) {
	now := time.Now()
	id = randomToken()
	sess = session{csrf: randomToken(), expires: now.Add(s.ttl)}
	s.mu.Lock()
	defer s.mu.Unlock()
	var oldest string
	for k, v := range s.m {
		if now.After(v.expires) {
			delete(s.m, k)
		} else if oldest == "" || v.expires.Before(s.m[oldest].expires) {
			oldest = k
		}
	}
	if len(s.m) >= maxSessions {
		delete(s.m, oldest)
	}
	s.m[id] = sess
	return id, sess
}

// get returns the live session id names.
func (s *sessions) get(id string) (session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.m[id]
	if !ok {
		return session{}, false
	}
	if time.Now().After(sess.expires) {
		delete(s.m, id)
		return session{}, false
	}
	return sess, true
}

func (s *sessions) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}

// equal compares secrets in constant time.
func equal(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
