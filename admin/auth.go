package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/golang-jwt/jwt/v5"

	"github.com/heraldhq/herald/auth"
)

const (
	cookieName = "herald_admin"
	// CSRFHeader carries the login's CSRF token on every
	// state-changing request. A custom header cannot be sent cross-site
	// without a CORS preflight, which this handler never grants.
	CSRFHeader = "X-Herald-CSRF"
	// insecureCSRF stands for the CSRF token in insecure mode, where
	// there is no login: the header must still be present, so a
	// cross-site form cannot post.
	insecureCSRF = "insecure"
)

type loginRequest struct {
	Password string `json:"password"`
	Token    string `json:"token"`
}

type loginResult struct {
	CSRF     string `json:"csrf"`
	Insecure bool   `json:"insecure,omitempty"`
	Node     string `json:"node"`
}

// login checks a password or an admin token and starts a login.
func (a *Handler) login(w http.ResponseWriter, r *http.Request) {
	if a.cfg.Insecure {
		writeJSON(w, http.StatusOK, loginResult{CSRF: insecureCSRF, Insecure: true, Node: a.hub.NodeID()})
		return
	}
	if !a.loginLimit.allow(r.RemoteAddr) {
		a.log.Warn("admin login rate-limited", "remote", r.RemoteAddr)
		w.Header().Set("Retry-After", fmt.Sprint(int(a.cfg.LoginEvery.Seconds()+0.999)))
		writeError(w, http.StatusTooManyRequests, "too many login attempts: wait and try again")
		return
	}
	var req loginRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 16<<10)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "login body: want JSON {\"password\":…} or {\"token\":…}")
		return
	}
	how, err := a.checkLogin(req)
	if err != nil {
		a.log.Warn("admin login refused", "remote", r.RemoteAddr, "reason", err.Error())
		writeError(w, http.StatusUnauthorized, "login refused: "+err.Error())
		return
	}
	id, sess := a.logins.create()
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: id, Path: a.cfg.CookiePath, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
		MaxAge: int(a.cfg.LoginTTL.Seconds()),
	})
	a.log.Info("admin login", "remote", r.RemoteAddr, "with", how)
	writeJSON(w, http.StatusOK, loginResult{CSRF: sess.csrf, Node: a.hub.NodeID()})
}

// checkLogin says how req authenticates, or why it does not.
func (a *Handler) checkLogin(req loginRequest) (string, error) {
	switch {
	case req.Password != "":
		// Both sides are compared whole, in constant time; an empty
		// configured password never matches.
		if a.cfg.Password == "" || !equal(req.Password, a.cfg.Password) {
			return "", errors.New("wrong password")
		}
		return "password", nil
	case req.Token != "":
		if a.cfg.TokenSecret == "" {
			return "", errors.New("admin tokens are not configured")
		}
		if err := a.checkToken(req.Token); err != nil {
			return "", err
		}
		return "token", nil
	default:
		return "", errors.New("send a password or a token")
	}
}

// adminClaims are an admin token's claims: the registered ones (exp is
// required, so that no token grants access for ever; nbf is checked when
// present) and admin, which must be true.
type adminClaims struct {
	Admin bool `json:"admin"`
	jwt.RegisteredClaims
}

func (a *Handler) checkToken(token string) error {
	var c adminClaims
	_, err := jwt.ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) {
		if err := auth.CheckCritical(t.Header); err != nil {
			return nil, err
		}
		return []byte(a.cfg.TokenSecret), nil
	}, jwt.WithValidMethods([]string{"HS256", "HS384", "HS512"}), jwt.WithExpirationRequired())
	if err != nil {
		return fmt.Errorf("invalid admin token: %w", err)
	}
	if !c.Admin {
		return errors.New("the token has no \"admin\": true claim")
	}
	return nil
}

func (a *Handler) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(cookieName); err == nil {
		a.logins.remove(c.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: a.cfg.CookiePath, HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: -1})
	writeJSON(w, http.StatusOK, struct{}{})
}

func (a *Handler) currentLoginInfo(w http.ResponseWriter, r *http.Request) {
	csrf := insecureCSRF
	if !a.cfg.Insecure {
		sess, _ := a.currentLogin(r)
		csrf = sess.csrf
	}
	writeJSON(w, http.StatusOK, loginResult{CSRF: csrf, Insecure: a.cfg.Insecure, Node: a.hub.NodeID()})
}

func (a *Handler) currentLogin(r *http.Request) (login, bool) {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return login{}, false
	}
	return a.logins.get(c.Value)
}

// authed lets a request through with a login (any, in insecure mode)
// and, unless it is a GET, the login's CSRF token.
func (a *Handler) authed(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		csrf := insecureCSRF
		if !a.cfg.Insecure {
			sess, ok := a.currentLogin(r)
			if !ok {
				writeError(w, http.StatusUnauthorized, "log in first")
				return
			}
			csrf = sess.csrf
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if got := r.Header.Get(CSRFHeader); got == "" || !equal(got, csrf) {
				writeError(w, http.StatusForbidden, "missing or wrong "+CSRFHeader+" header")
				return
			}
		}
		next(w, r)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}
