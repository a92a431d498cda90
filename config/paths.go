package config

import (
	"path"
	"strings"
)

// Endpoint paths. Every endpoint's path is a key of its own section,
// under Centrifugo v6's name (handler_prefix) and with its default, so a
// Centrifugo file that moves an endpoint moves it in Herald too. The
// server mounts what Paths returns; Validate (pathProblems) refuses paths
// that two endpoints of one listener would share.

// PrometheusConfig is where the node's Prometheus metrics are served.
type PrometheusConfig struct {
	// HandlerPrefix is wiring (the server mounts the endpoint).
	HandlerPrefix string `yaml:"handler_prefix" default:"/metrics" doc:"the path of the Prometheus metrics, on the main listener and on the admin listener ('admin.address'). Herald always serves them: Centrifugo's 'prometheus.enabled' is taken and changes nothing"`
}

// HealthConfig is Centrifugo's health endpoint. Herald's own probes,
// /healthz and /readyz, are served whatever it says.
type HealthConfig struct {
	// Enabled and HandlerPrefix are wiring (the server mounts the endpoint).
	Enabled       bool   `yaml:"enabled" doc:"also serve Centrifugo's health endpoint at 'health.handler_prefix': '200' with the body '{}' while the process serves HTTP, as Centrifugo answers. Herald's '/healthz' (alive) and '/readyz' (ready; '503' while draining) are served either way, and '/readyz' is the better readiness probe"`
	HandlerPrefix string `yaml:"handler_prefix" default:"/health" doc:"the path of Centrifugo's health endpoint"`
}

// The fixed paths of Herald's own probes and of pprof.
const (
	HealthzPath = "/healthz"
	ReadyzPath  = "/readyz"
	PprofPath   = "/debug/pprof"
)

// Paths are the endpoints' paths with the defaults applied and without a
// trailing slash.
type Paths struct {
	WebSocket, UniWebSocket       string
	HTTPStream, SSE, Emulation    string
	UniHTTPStream, UniSSE         string
	Metrics, Health, API, AdminUI string
	Swagger                       string
	WebTransport                  string
	Init                          string // Centrifugo's connection init endpoint (conninit.go)

	// Which endpoints are served, for the collision check.
	apiOn, adminOn, adminOnMain, healthOn   bool
	swaggerOn                               bool
	uniWS, httpStream, sse, uniHTTP, uniSSE bool
	webTransport                            bool
	initOn                                  bool
}

// Paths resolves every endpoint's path.
func (c Config) Paths() Paths {
	t := c.TransportsConfig
	return Paths{
		WebSocket:     resolvePath(c.WebSocket.HandlerPrefix, "/connection/websocket"),
		UniWebSocket:  resolvePath(c.UniWebSocket.HandlerPrefix, "/connection/uni_websocket"),
		HTTPStream:    resolvePath(t.HTTPStream.HandlerPrefix, "/connection/http_stream"),
		SSE:           resolvePath(t.SSE.HandlerPrefix, "/connection/sse"),
		Emulation:     resolvePath(t.Emulation.HandlerPrefix, "/emulation"),
		UniHTTPStream: resolvePath(t.UniHTTPStream.HandlerPrefix, "/connection/uni_http_stream"),
		UniSSE:        resolvePath(t.UniSSE.HandlerPrefix, "/connection/uni_sse"),
		Metrics:       resolvePath(c.Prometheus.HandlerPrefix, "/metrics"),
		Health:        resolvePath(c.Health.HandlerPrefix, "/health"),
		API:           c.HTTPAPI.Prefix(),
		AdminUI:       c.Admin.UI.MountPath(),
		Swagger:       resolvePath(c.Swagger.HandlerPrefix, "/swagger"),
		WebTransport:  resolvePath(c.WebTransport.HandlerPrefix, "/connection/webtransport"),
		webTransport:  c.WebTransport.Enabled,
		Init:          resolvePath(c.Init.HandlerPrefix, "/connection/init"),
		initOn:        c.Init.Enabled,
		swaggerOn:     c.Swagger.Enabled,
		apiOn:         !c.HTTPAPI.Disabled,
		adminOn:       c.Admin.UI.Enabled,
		adminOnMain:   c.Admin.UI.Enabled && c.Admin.Address == "",
		healthOn:      c.Health.Enabled,
		uniWS:         c.UniWebSocket.Enabled,
		httpStream:    t.HTTPStream.Enabled,
		sse:           t.SSE.Enabled,
		uniHTTP:       t.UniHTTPStream.Enabled,
		uniSSE:        t.UniSSE.Enabled,
	}
}

// resolvePath is a configured path without its trailing slash, or def
// when none is set.
func resolvePath(p, def string) string {
	if p = strings.TrimRight(p, "/"); p == "" {
		return def
	}
	return p
}

// endpoint is one path a listener serves, for the collision check.
type endpoint struct {
	key     string // the key that sets it, or how Herald names a fixed one
	raw     string // as configured; "" for a fixed or defaulted path
	path    string
	subtree bool // serves everything below path too
}

// endpoints lists what the main listener serves (admin false) or the admin
// listener (admin true), in the order problems are reported.
func (p Paths) endpoints(c Config, admin bool) []endpoint {
	if admin {
		es := []endpoint{
			{key: "pprof (Herald's " + PprofPath + "/)", path: PprofPath, subtree: true},
			{key: "prometheus.handler_prefix", raw: c.Prometheus.HandlerPrefix, path: p.Metrics},
		}
		if p.adminOn {
			es = append(es, endpoint{key: "admin.ui.path", raw: c.Admin.UI.Path, path: p.AdminUI, subtree: true})
		}
		return es
	}
	t := c.TransportsConfig
	es := []endpoint{
		{key: "Herald's " + HealthzPath, path: HealthzPath},
		{key: "Herald's " + ReadyzPath, path: ReadyzPath},
		{key: "websocket.handler_prefix", raw: c.WebSocket.HandlerPrefix, path: p.WebSocket},
	}
	add := func(on bool, key, raw, path string, subtree bool) {
		if on {
			es = append(es, endpoint{key: key, raw: raw, path: path, subtree: subtree})
		}
	}
	add(p.uniWS, "uni_websocket.handler_prefix", c.UniWebSocket.HandlerPrefix, p.UniWebSocket, false)
	add(p.httpStream, "http_stream.handler_prefix", t.HTTPStream.HandlerPrefix, p.HTTPStream, false)
	add(p.sse, "sse.handler_prefix", t.SSE.HandlerPrefix, p.SSE, false)
	add(p.httpStream || p.sse, "emulation.handler_prefix", t.Emulation.HandlerPrefix, p.Emulation, false)
	add(p.uniHTTP, "uni_http_stream.handler_prefix", t.UniHTTPStream.HandlerPrefix, p.UniHTTPStream, false)
	add(p.uniSSE, "uni_sse.handler_prefix", t.UniSSE.HandlerPrefix, p.UniSSE, false)
	add(p.webTransport, "webtransport.handler_prefix", c.WebTransport.HandlerPrefix, p.WebTransport, false)
	add(p.initOn, "init.handler_prefix", c.Init.HandlerPrefix, p.Init, false)
	add(true, "prometheus.handler_prefix", c.Prometheus.HandlerPrefix, p.Metrics, false)
	add(p.healthOn, "health.handler_prefix", c.Health.HandlerPrefix, p.Health, false)
	// The API answers under its prefix even without a key (the 403 that
	// says how to turn it on), so it holds the subtree unless disabled.
	add(p.apiOn, "http_api.handler_prefix", c.HTTPAPI.HandlerPrefix, p.API, true)
	add(p.adminOnMain, "admin.ui.path", c.Admin.UI.Path, p.AdminUI, true)
	add(p.swaggerOn, "swagger.handler_prefix", c.Swagger.HandlerPrefix, p.Swagger, true)
	return es
}

// pathProblems checks every configured path: one of its own, starting
// with "/", and neither the path of another endpoint of the same listener
// nor below one that serves a whole subtree (or above, for its own).
func (c Config) pathProblems(bad func(key, format string, args ...any)) {
	p := c.Paths()
	wellFormed := map[string]bool{}
	for _, admin := range []bool{false, true} {
		for _, e := range p.endpoints(c, admin) {
			if _, seen := wellFormed[e.key]; seen || e.raw == "" {
				continue
			}
			if msg := pathFormProblem(e.raw); msg != "" {
				bad(e.key, "%q: %s", e.raw, msg)
				wellFormed[e.key] = false
				continue
			}
			wellFormed[e.key] = true
		}
	}
	for _, admin := range []bool{false, true} {
		if admin && c.Admin.Address == "" {
			continue
		}
		es := p.endpoints(c, admin)
		where := "the main listener"
		if admin {
			where = "the admin listener (admin.address)"
		}
		for i, e := range es {
			if ok, checked := wellFormed[e.key]; checked && !ok {
				continue
			}
			for _, o := range es[:i] {
				if ok, checked := wellFormed[o.key]; checked && !ok {
					continue
				}
				switch {
				case e.path == o.path:
					bad(e.key, "%q is also the path of %s on %s: give each endpoint a path of its own", e.path, o.key, where)
				case o.subtree && strings.HasPrefix(e.path, o.path+"/"):
					bad(e.key, "%q is below %s %q, which serves every path under it on %s: choose a path outside it", e.path, o.key, o.path, where)
				case e.subtree && strings.HasPrefix(o.path, e.path+"/"):
					bad(e.key, "%q would serve every path under it on %s, %s %q among them: choose a path that holds no other endpoint", e.path, where, o.key, o.path)
				default:
					continue
				}
				break // one problem per key is enough to act on
			}
		}
	}
}

// pathFormProblem says what is wrong with a configured path, or "".
func pathFormProblem(raw string) string {
	p := strings.TrimRight(raw, "/")
	switch {
	case !strings.HasPrefix(raw, "/"):
		return "want a path starting with /, such as /connection/websocket"
	case p == "":
		return "want a path of its own, not the root: other endpoints are served beside it"
	case strings.ContainsAny(p, " ?#{}%\t\n"):
		return "want a plain path: no spaces, '?', '#', '%' or braces"
	case path.Clean(p) != p:
		return "want a clean path: no '//', '.' or '..' segments"
	}
	return ""
}
