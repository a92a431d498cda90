package admin

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"sync"
	"time"
)

// Logins are kept in memory: a login is good on the node that issued it,
// until it expires, the operator logs out or the node restarts. (Herald
// calls them logins: "session" is the emulation session of an
// HTTP-streaming or SSE client.)

// maxLogins bounds the logins kept at once; the oldest go first. Logging
// in is rate-limited, so only many operators reach it.
const maxLogins = 1024

type login struct {
	csrf    string
	expires time.Time
}

type loginStore struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[string]login
}

func newLoginStore(ttl time.Duration) *loginStore {
	return &loginStore{ttl: ttl, m: make(map[string]login)}
}

// randomToken returns 32 random bytes, URL-safe.
func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// create starts a login and returns its id and CSRF token.
func (s *loginStore) create() (id string, l login) {
	now := time.Now()
	id = randomToken()
	l = login{csrf: randomToken(), expires: now.Add(s.ttl)}
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
	if len(s.m) >= maxLogins {
		delete(s.m, oldest)
	}
	s.m[id] = l
	return id, l
}

// get returns the live login id names.
func (s *loginStore) get(id string) (login, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.m[id]
	if !ok {
		return login{}, false
	}
	if time.Now().After(l.expires) {
		delete(s.m, id)
		return login{}, false
	}
	return l, true
}

func (s *loginStore) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}

// equal compares secrets in constant time.
func equal(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
