package admin

import (
	"embed"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/hub"
)

//go:embed ui
var uiFiles embed.FS

// Config configures the admin handler.
type Config struct {
	// Password logs in an operator; compared in constant time.
	Password string
	// TokenSecret checks admin tokens: HMAC-signed JWTs (HS256, HS384,
	// HS512) whose claims hold "admin": true.
	TokenSecret string
	// Insecure needs no login at all. For local development only: anyone
	// who reaches the handler controls the cluster.
	Insecure bool
	// LoginTTL bounds a login's life (default 8h).
	LoginTTL time.Duration
	// LoginBurst login attempts per client IP are allowed at once, then
	// one per LoginEvery (defaults 5 and 12s: 5 a minute).
	LoginBurst int
	LoginEvery time.Duration
	// CookiePath is the path the handler is mounted under, which the
	// login cookie is limited to (default "/").
	CookiePath string
	// Logger receives the audit log of admin actions; nil means
	// slog.Default().
	Logger *slog.Logger
	// Pages, when set, serves the UI's pages instead of the embedded
	// ones: a build of the UI from a directory, or a development server
	// behind a reverse proxy (Centrifugo's admin.web_path and
	// web_proxy_address). The API under /api/ stays this handler's.
	Pages http.Handler
	// KeepAlive is how often an idle event stream (channel tail, trace)
	// gets a comment, so proxies do not time it out (default 15s).
	KeepAlive time.Duration
	// TraceWriteTimeout cuts off a browser that does not take a write of
	// its trace (default 10s).
	TraceWriteTimeout time.Duration
}

const (
	defaultKeepAlive         = 15 * time.Second
	defaultTraceWriteTimeout = 10 * time.Second
	defaultLoginTTL          = 8 * time.Hour
	defaultLoginBurst        = 5
	defaultLoginEvery        = 12 * time.Second
)

// Handler serves the admin UI and its JSON API. Mount it with
// http.StripPrefix under a path ending in "/".
type Handler struct {
	hub        *hub.Hub
	cfg        Config
	log        *slog.Logger
	api        http.Handler
	logins     *loginStore
	loginLimit *loginLimiter
	static     http.Handler
	mux        *http.ServeMux
}

// New returns the admin handler for h. It needs a password, a token
// secret, or Insecure.
func New(h *hub.Hub, cfg Config) (*Handler, error) {
	if h == nil {
		return nil, errors.New("admin: hub is required")
	}
	if cfg.Password == "" && cfg.TokenSecret == "" && !cfg.Insecure {
		return nil, errors.New("admin: set a password or a token secret (or insecure, for local development only)")
	}
	if cfg.LoginTTL < 0 || cfg.LoginBurst < 0 || cfg.LoginEvery < 0 {
		return nil, errors.New("admin: login TTL, login burst and login interval must not be negative")
	}
	if cfg.CookiePath == "" {
		cfg.CookiePath = "/"
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = defaultKeepAlive
	}
	if cfg.TraceWriteTimeout <= 0 {
		cfg.TraceWriteTimeout = defaultTraceWriteTimeout
	}
	if cfg.LoginTTL == 0 {
		cfg.LoginTTL = defaultLoginTTL
	}
	if cfg.LoginBurst == 0 {
		cfg.LoginBurst = defaultLoginBurst
	}
	if cfg.LoginEvery == 0 {
		cfg.LoginEvery = defaultLoginEvery
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	log = log.With("component", "admin")
	// The server API runs in process, behind the admin login: it needs
	// no key of its own.
	apiHandler, err := api.NewHandler(h, api.Config{Insecure: true, Logger: log})
	if err != nil {
		return nil, err
	}
	sub, err := fs.Sub(uiFiles, "ui")
	if err != nil {
		return nil, err
	}
	a := &Handler{
		hub: h, cfg: cfg, log: log, api: apiHandler,
		logins:     newLoginStore(cfg.LoginTTL),
		loginLimit: newLoginLimiter(cfg.LoginBurst, cfg.LoginEvery),
		static:     http.FileServerFS(sub),
	}
	if cfg.Pages != nil {
		a.static = cfg.Pages
	}
	if cfg.Insecure {
		log.Warn("admin UI in insecure mode: no login is asked, anyone who reaches it controls the cluster; for local development only")
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/login", a.login)
	mux.HandleFunc("POST /api/logout", a.authed(a.logout))
	mux.HandleFunc("GET /api/login", a.authed(a.currentLoginInfo))
	mux.HandleFunc("GET /api/overview", a.authed(a.overview))
	mux.HandleFunc("POST /api/call/{method}", a.authed(a.call))
	mux.HandleFunc("GET /api/tail", a.authed(a.tail))
	mux.HandleFunc("GET /api/trace", a.authed(a.trace))
	mux.HandleFunc("POST /api/trace", a.authed(a.trace))
	mux.HandleFunc("GET /api/inspect/user", a.authed(a.inspectUser))
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such admin endpoint: "+r.Method+" "+r.URL.Path)
	})
	mux.HandleFunc("/", a.serveStatic)
	a.mux = mux
	return a, nil
}

// ServeHTTP implements http.Handler.
func (a *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The pages must not be framed (clickjacking) nor load anything from
	// elsewhere.
	h := w.Header()
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
	a.mux.ServeHTTP(w, r)
}

func (a *Handler) serveStatic(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "the pages take GET")
		return
	}
	// Pages change with the binary: revalidate rather than cache for long.
	w.Header().Set("Cache-Control", "no-cache")
	if strings.HasSuffix(r.URL.Path, "/") || r.URL.Path == "" {
		r = r.Clone(r.Context())
		r.URL.Path = "/"
	}
	a.static.ServeHTTP(w, r)
}
