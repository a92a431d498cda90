package admin_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/heraldhq/herald/admin"
	"github.com/heraldhq/herald/internal/test/testenv"
)

func TestNewNeedsAWayIn(t *testing.T) {
	t.Parallel()
	e := startEnv(t, admin.Config{Insecure: true}, false)
	if _, err := admin.New(e.hub, admin.Config{}); err == nil {
		t.Fatal("admin.New without password, token secret or insecure: want an error")
	}
	if _, err := admin.New(nil, admin.Config{Password: testPassword}); err == nil {
		t.Fatal("admin.New without a hub: want an error")
	}
}

// Without a login the JSON API answers 401; the pages themselves (no
// data in them) load, so the login form can show.
func TestNoLoginIs401(t *testing.T) {
	t.Parallel()
	e := startEnv(t, admin.Config{Password: testPassword}, false)
	for _, r := range []struct{ method, path string }{
		{"GET", "api/login"}, {"GET", "api/overview"}, {"GET", "api/tail?channel=x"},
		{"GET", "api/trace?type=user&entity=u"}, {"POST", "api/trace"}, {"GET", "api/inspect/user?user=u"},
		{"POST", "api/call/info"}, {"POST", "api/call/publish"}, {"POST", "api/logout"},
	} {
		if status, body := e.do(r.method, r.path, "{}", map[string]string{admin.CSRFHeader: "guess"}); status != http.StatusUnauthorized {
			t.Errorf("%s %s without a login: %d %s, want 401", r.method, r.path, status, body)
		}
	}
	// A forged cookie is no login either.
	e.client.Jar.SetCookies(mustURL(t, e.srv.URL+"/admin/"), []*http.Cookie{{Name: "herald_admin", Value: "forged"}})
	if status, _ := e.do("GET", "api/overview", nil, nil); status != http.StatusUnauthorized {
		t.Errorf("forged login cookie: %d, want 401", status)
	}
	status, body := e.do("GET", "", nil, nil)
	if status != 200 || !strings.Contains(string(body), "Herald") {
		t.Fatalf("index page: %d %.100s", status, body)
	}
	for _, f := range []string{"app.js", "style.css"} {
		if status, _ := e.do("GET", f, nil, nil); status != 200 {
			t.Errorf("%s: %d", f, status)
		}
	}
	if status, _ := e.do("GET", "api/nope", nil, nil); status != http.StatusNotFound {
		t.Errorf("unknown endpoint: %d, want 404", status)
	}
}

func TestPasswordLoginAndCSRF(t *testing.T) {
	t.Parallel()
	e := startEnv(t, admin.Config{Password: testPassword, LoginBurst: 100}, false)
	for _, body := range []any{map[string]string{"password": "wrong"}, map[string]string{"password": testPassword + "x"}, map[string]string{}, "not json"} {
		if status, out := e.do("POST", "api/login", body, nil); status == 200 {
			t.Fatalf("login with %v: 200 %s", body, out)
		}
	}
	// The cookie: HttpOnly, SameSite=Strict, limited to the mount path,
	// not Secure over plain HTTP.
	req, _ := http.NewRequest("POST", e.srv.URL+"/admin/api/login", strings.NewReader(`{"password":"`+testPassword+`"}`))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	cs := res.Cookies()
	if len(cs) != 1 || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode || cs[0].Secure || cs[0].Path != "/admin/" {
		t.Fatalf("login cookie: %+v", cs)
	}

	e.login()
	status, body := e.do("GET", "api/login", nil, nil)
	var s struct{ CSRF, Node string }
	if status != 200 || json.Unmarshal(body, &s) != nil || s.CSRF != e.csrf || s.Node != e.hub.NodeID() {
		t.Fatalf("login: %d %s", status, body)
	}
	// State-changing requests need the CSRF header, right.
	for _, h := range []map[string]string{nil, {admin.CSRFHeader: "wrong"}, {admin.CSRFHeader: ""}} {
		if status, body := e.do("POST", "api/call/info", "{}", h); status != http.StatusForbidden {
			t.Errorf("call with CSRF header %v: %d %s, want 403", h, status, body)
		}
	}
	if r := e.call("info", map[string]any{}); r["nodes"] == nil {
		t.Fatalf("info through the admin API: %v", r)
	}
	// Logging out ends the login.
	if status, body := e.do("POST", "api/logout", "{}", map[string]string{admin.CSRFHeader: e.csrf}); status != 200 {
		t.Fatalf("logout: %d %s", status, body)
	}
	if status, _ := e.do("GET", "api/overview", nil, nil); status != http.StatusUnauthorized {
		t.Fatalf("after logout: %d, want 401", status)
	}
}

func TestSecureCookieOverTLS(t *testing.T) {
	t.Parallel()
	e := startEnv(t, admin.Config{Password: testPassword}, true)
	req, _ := http.NewRequest("POST", e.srv.URL+"/admin/api/login", strings.NewReader(`{"password":"`+testPassword+`"}`))
	res, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if cs := res.Cookies(); len(cs) != 1 || !cs[0].Secure {
		t.Fatalf("login cookie over TLS: %+v, want Secure", cs)
	}
}

func adminToken(t *testing.T, secret string, method jwt.SigningMethod, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, claims).SignedString([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestTokenLogin(t *testing.T) {
	t.Parallel()
	e := startEnv(t, admin.Config{TokenSecret: testSecret, LoginBurst: 100}, false)
	exp := time.Now().Add(time.Hour).Unix()
	refused := map[string]string{
		"no admin claim": adminToken(t, testSecret, jwt.SigningMethodHS256, jwt.MapClaims{"sub": "ops", "exp": exp}),
		"admin false":    adminToken(t, testSecret, jwt.SigningMethodHS256, jwt.MapClaims{"admin": false, "exp": exp}),
		"other secret":   adminToken(t, "another-secret-0123456789", jwt.SigningMethodHS256, jwt.MapClaims{"admin": true, "exp": exp}),
		// A token without exp would never expire: refused.
		"no exp":      adminToken(t, testSecret, jwt.SigningMethodHS256, jwt.MapClaims{"admin": true}),
		"crit header": critToken(t, jwt.MapClaims{"admin": true, "exp": exp}),
		"expired":     adminToken(t, testSecret, jwt.SigningMethodHS256, jwt.MapClaims{"admin": true, "exp": time.Now().Add(-time.Minute).Unix()}),
		"alg none":    unsignedToken(t),
		"garbage":     "a.b.c",
	}
	for why, tok := range refused {
		if status, body := e.do("POST", "api/login", map[string]string{"token": tok}, nil); status != http.StatusUnauthorized {
			t.Errorf("token (%s): %d %s, want 401", why, status, body)
		}
	}
	// No password is configured: none works, not even an empty one.
	if status, _ := e.do("POST", "api/login", map[string]string{"password": ""}, nil); status != http.StatusUnauthorized {
		t.Errorf("empty password: %d, want 401", status)
	}
	for _, m := range []jwt.SigningMethod{jwt.SigningMethodHS256, jwt.SigningMethodHS512} {
		tok := adminToken(t, testSecret, m, jwt.MapClaims{"admin": true, "exp": exp})
		if status, body := e.do("POST", "api/login", map[string]string{"token": tok}, nil); status != 200 {
			t.Fatalf("admin token (%s): %d %s", m.Alg(), status, body)
		}
	}
	if status, _ := e.do("GET", "api/overview", nil, nil); status != 200 {
		t.Fatalf("overview after token login: %d", status)
	}
}

// critToken is a well-signed admin token whose header marks an extension
// critical (RFC 7515 section 4.1.11): the server understands none.
func critToken(t *testing.T, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, claims)
	tok.Header["crit"] = []string{"x-unknown"}
	s, err := tok.SignedString([]byte(testSecret))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func unsignedToken(t *testing.T) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"admin": true}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Login attempts are limited per client IP: past the burst even the right
// password is refused with 429, while another IP still gets in.
func TestLoginRateLimit(t *testing.T) {
	t.Parallel()
	e := startEnv(t, admin.Config{Password: testPassword, LoginBurst: 3, LoginEvery: time.Hour}, false)
	a, err := admin.New(e.hub, admin.Config{Password: testPassword, LoginBurst: 3, LoginEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	login := func(ip, password string) int {
		r := httptest.NewRequest("POST", "/api/login", strings.NewReader(`{"password":"`+password+`"}`))
		r.RemoteAddr = ip + ":40000"
		w := httptest.NewRecorder()
		a.ServeHTTP(w, r)
		return w.Code
	}
	for i := range 3 {
		if code := login("192.0.2.1", "guess"); code != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d, want 401", i, code)
		}
	}
	if code := login("192.0.2.1", testPassword); code != http.StatusTooManyRequests {
		t.Fatalf("attempt past the burst: %d, want 429", code)
	}
	if code := login("192.0.2.2", testPassword); code != 200 {
		t.Fatalf("another IP: %d, want 200", code)
	}
}

// Insecure mode asks no login, but still wants the CSRF header on
// state-changing requests, so that another site's form cannot post.
func TestInsecure(t *testing.T) {
	t.Parallel()
	var log testenv.LockedBuffer
	e := startEnv(t, admin.Config{Insecure: true, Logger: slog.New(slog.NewTextHandler(&log, nil))}, false)
	if !strings.Contains(log.String(), "level=WARN") || !strings.Contains(log.String(), "insecure mode") {
		t.Fatalf("no startup warning in insecure mode; log: %s", log.String())
	}
	if status, body := e.do("GET", "api/overview", nil, nil); status != 200 {
		t.Fatalf("overview in insecure mode: %d %s", status, body)
	}
	if status, _ := e.do("POST", "api/call/info", "{}", nil); status != http.StatusForbidden {
		t.Fatalf("call without the CSRF header: %d, want 403", status)
	}
	e.login() // any password: insecure mode answers the fixed token
	if r := e.call("info", map[string]any{}); r["nodes"] == nil {
		t.Fatalf("info: %v", r)
	}
}
