package config

import (
	"fmt"
	"net"
	"net/url"
	"reflect"
	"strconv"
	"strings"
)

// centrifugoRule maps a Centrifugo key that Herald names or shapes
// differently. Rules run before the by-name mapping (centrifugo_map.go).
type centrifugoRule struct {
	Key    string // Centrifugo's key; "[]" is any item of a list
	Herald string // what it becomes, for the key map of the docs
	Note   string // how, for the docs; the message when the value cannot be taken
	apply  func(m *cfMapper, c cfCtx, v any)
}

// centrifugoNote is a Centrifugo key Herald has no key of that name for.
// Values that change nothing in Herald (off, empty, or Centrifugo's default
// where that is what Herald does) are taken; any other value is refused
// with the note. A note no longer applies once Herald has a key of the
// same name, which then maps by name.
type centrifugoNote struct {
	Key    string
	Note   string
	any    bool     // every value changes nothing (prometheus.enabled: Herald always serves /metrics)
	values []string // values besides off ones that change nothing
}

// accept reports whether v changes nothing in Herald.
func (n centrifugoNote) accept(v any) bool {
	if n.any || isOff(v) {
		return true
	}
	s := fmt.Sprint(v)
	for _, w := range n.values {
		if s == w {
			return true
		}
	}
	return false
}

// centrifugoRules are the renamed and reshaped keys.
func centrifugoRules() []centrifugoRule {
	return []centrifugoRule{
		{Key: "http_server.address", Herald: "address", Note: "'address' is host:port; the port comes from http_server.port (default 8000)", apply: listenAddress},
		{Key: "http_server.port", Herald: "address", Note: "'address' is host:port; the host comes from http_server.address", apply: listenAddress},
		{Key: "http_server.tls", Herald: "tls.cert_file, tls.key_file, tls.client_ca_file", Note: "with 'enabled: true': cert_pem and key_pem become tls.cert_file and tls.key_file, client_ca_pem becomes tls.client_ca_file with tls.client_auth: require. They must be file paths: Herald reads certificates from files (and reloads them when they change), not inline PEM", apply: listenerTLS("tls")},
		{Key: "grpc_api.tls", Herald: "grpc_api.tls.cert_file, .key_file, .client_ca_file", Note: "as http_server.tls, for the gRPC API's listener", apply: listenerTLS("grpc_api.tls")},
		{Key: "uni_grpc.tls", Herald: "uni_grpc.tls.cert_file, .key_file, .client_ca_file", Note: "as http_server.tls, for the uni_grpc listener", apply: listenerTLS("uni_grpc.tls")},
		{Key: "http_server.tls_autocert", Herald: "tls_autocert", Note: "enabled, host_whitelist, cache_dir and email as they are", apply: autocert},
		{Key: "http_server.tls_autocert.http_addr", Herald: "tls_autocert.http_address", Note: "where the HTTP-01 challenge listener listens", apply: rename("tls_autocert.http_address")},
		{Key: "log.level", Herald: "log.level", Note: "'trace' becomes 'debug' and 'none' becomes 'error'", apply: logLevel},
		{Key: "node.name", Herald: "name", Note: "the node's name", apply: rename("name")},
		{Key: "client.allowed_origins", Herald: "websocket.allowed_origins", Note: "the browser origins allowed to connect, on every transport", apply: rename("websocket.allowed_origins")},
		{Key: "client.proxy.connect", Herald: "proxies[], client.proxy.connect", Note: "with 'enabled: true', becomes a proxy named 'client.proxy.connect' that client.proxy.connect names; without, it is not used, as in Centrifugo", apply: clientProxy("client.proxy.connect")},
		{Key: "client.proxy.refresh", Herald: "proxies[], client.proxy.refresh", Note: "as client.proxy.connect, named 'client.proxy.refresh'", apply: clientProxy("client.proxy.refresh")},
		{Key: "channel.proxy.subscribe", Herald: "proxies[]", Note: "becomes a proxy named 'channel.proxy.subscribe', used by the namespaces that enable the subscribe proxy without naming one", apply: defaultProxy("channel.proxy.subscribe")},
		{Key: "channel.proxy.publish", Herald: "proxies[]", Note: "becomes a proxy named 'channel.proxy.publish'", apply: defaultProxy("channel.proxy.publish")},
		{Key: "channel.proxy.sub_refresh", Herald: "proxies[]", Note: "becomes a proxy named 'channel.proxy.sub_refresh'", apply: defaultProxy("channel.proxy.sub_refresh")},
		{Key: "channel.proxy.subscribe_stream", Herald: "proxies[]", Note: "becomes a proxy named 'channel.proxy.subscribe_stream'", apply: defaultProxy("channel.proxy.subscribe_stream")},
		{Key: "channel.namespaces[].subscribe_proxy_enabled", Herald: "channel.namespaces[].subscribe_proxy", Note: "true: 'subscribe_proxy' names 'subscribe_proxy_name', or the proxy of channel.proxy.subscribe. Also under channel.without_namespace", apply: namespaceProxy("subscribe")},
		{Key: "channel.namespaces[].publish_proxy_enabled", Herald: "channel.namespaces[].publish_proxy", Note: "as subscribe_proxy_enabled", apply: namespaceProxy("publish")},
		{Key: "channel.namespaces[].sub_refresh_proxy_enabled", Herald: "channel.namespaces[].sub_refresh_proxy", Note: "as subscribe_proxy_enabled", apply: namespaceProxy("sub_refresh")},
		{Key: "channel.namespaces[].subscribe_stream_proxy_enabled", Herald: "channel.namespaces[].subscribe_stream_proxy", Note: "as subscribe_proxy_enabled", apply: namespaceProxy("subscribe_stream")},
		{Key: "channel.namespaces[].subscribe_proxy_name", Herald: "channel.namespaces[].subscribe_proxy", Note: "read with subscribe_proxy_enabled (alone it is not used, as in Centrifugo)", apply: proxyName},
		{Key: "channel.namespaces[].publish_proxy_name", Herald: "channel.namespaces[].publish_proxy", Note: "read with publish_proxy_enabled", apply: proxyName},
		{Key: "channel.namespaces[].sub_refresh_proxy_name", Herald: "channel.namespaces[].sub_refresh_proxy", Note: "read with sub_refresh_proxy_enabled", apply: proxyName},
		{Key: "channel.namespaces[].subscribe_stream_proxy_name", Herald: "channel.namespaces[].subscribe_stream_proxy", Note: "read with subscribe_stream_proxy_enabled", apply: proxyName},
		{Key: "channel.without_namespace", Herald: "channel.without_namespace", Note: "the namespace options, mapped as those of channel.namespaces[]", apply: withoutNamespace},
		{Key: "channel.history_meta_ttl", Herald: "channel.namespaces[].history_meta_ttl", Note: "Herald sets it per namespace: it becomes the history_meta_ttl of channel.without_namespace and of every namespace that sets none", apply: historyMetaTTL},
		{Key: "rpc.proxy", Herald: "proxies[]", Note: "becomes a proxy named 'rpc.proxy', used by the RPC namespaces that enable the proxy without naming one", apply: defaultProxy("rpc.proxy")},
		{Key: "rpc.without_namespace.proxy_enabled", Herald: "rpc.proxy", Note: "true: 'rpc.proxy' names rpc.without_namespace.proxy_name, or the proxy of rpc.proxy", apply: rpcProxy},
		{Key: "rpc.without_namespace.proxy_name", Herald: "rpc.proxy", Note: "read with rpc.without_namespace.proxy_enabled", apply: proxyName},
		{Key: "rpc.namespaces[].proxy_enabled", Herald: "rpc.namespaces[].proxy", Note: "true: 'proxy' names 'proxy_name', or the proxy of rpc.proxy", apply: rpcProxy},
		{Key: "rpc.namespaces[].proxy_name", Herald: "rpc.namespaces[].proxy", Note: "read with proxy_enabled", apply: proxyName},
		{Key: "proxies[].http.static_headers", Herald: "proxies[].static_http_headers", Note: "headers sent with every call", apply: rename("static_http_headers")},
		{Key: "proxies[].grpc.tls", Herald: "proxies[].grpc_tls", Note: "needs Herald's gRPC proxy", apply: rename("grpc_tls")},
		{Key: "admin.enabled", Herald: "admin.ui.enabled", Note: "the admin web UI", apply: rename("admin.ui.enabled")},
		{Key: "admin.password", Herald: "admin.ui.password", Note: "at least 8 characters in Herald", apply: rename("admin.ui.password")},
		{Key: "admin.secret", Herald: "admin.ui.token_secret", Note: "the HMAC key of admin tokens; at least 16 characters in Herald", apply: rename("admin.ui.token_secret")},
		{Key: "admin.insecure", Herald: "admin.ui.insecure", Note: "", apply: rename("admin.ui.insecure")},
		{Key: "admin.handler_prefix", Herald: "admin.ui.path", Note: "the admin UI and its API move with it; empty or '/' (Centrifugo's default, the UI at '/') becomes Herald's default, '/admin', since Herald serves other endpoints beside it", apply: adminPath},
		{Key: "http_api.disabled", Herald: "http_api.key", Note: "true: the API is off (Herald's API is off without a key)", apply: apiDisabled},
		{Key: "engine.redis.address", Herald: "engine.redis.address", Note: "'host:port' or a 'redis://' URL (whose user, password and database number are taken too); several addresses are shards, as in Centrifugo, but Herald places channels on them by its own hash, so existing streams are not found", apply: redisAddress},
		{Key: "engine.redis.cluster_address", Herald: "engine.redis.addresses, engine.redis.cluster", Note: "one entry, the seed addresses of a Redis Cluster separated by commas; Centrifugo reads each entry as a Cluster of its own (a shard), which Herald refuses: its shards are standalone servers or Sentinel sets", apply: clusterAddress},
		{Key: "engine.redis.sentinel_address", Herald: "engine.redis.addresses, engine.redis.shards", Note: "as in Centrifugo, each entry is one shard, its Sentinels separated by commas ('s1:26379,s2:26379'): one entry becomes addresses; several become shards, each with sentinel_master_name and db (Herald places channels on them by its own hash, so existing streams are not found). Centrifugo also reads several entries of one Sentinel each as shards: if they are the Sentinels of one set, write them as one entry", apply: sentinelAddress},
		{Key: "engine.redis.tls", Herald: "engine.redis.tls", Note: "Centrifugo's TLS object has other keys than Herald's: with TLS on, write the Herald file (herald config convert) and set engine.redis.tls there", apply: refuseUnlessOff},
		{Key: "engine.redis.user", Herald: "engine.redis.username", Note: "", apply: rename("engine.redis.username")},
		{Key: "engine.redis.sentinel_user", Herald: "engine.redis.sentinel_username", Note: "", apply: rename("engine.redis.sentinel_username")},
		{Key: "engine.redis.sentinel_master_name", Herald: "engine.redis.sentinel_master", Note: "", apply: rename("engine.redis.sentinel_master")},
	}
}

// centrifugoMissing are the Centrifugo keys Herald has no key of that
// name for.
func centrifugoMissing() []centrifugoNote {
	return []centrifugoNote{
		{Key: "http_server.internal_address", Note: "Herald has one listener for clients, the API, '/metrics' and the health checks; admin.address adds a separate one for pprof and '/metrics'. Remove it, and protect '/api' with http_api.key"},
		{Key: "http_server.internal_port", Note: "Herald has one listener for clients, the API, '/metrics' and the health checks; admin.address adds a separate one for pprof and '/metrics'. Remove it, and protect '/api' with http_api.key"},
		{Key: "http_server.tls_autocert.http", Note: "", any: true},
		{Key: "http_server.tls_autocert.server_name", Note: "Herald requests certificates for the names of host_whitelist, by the name clients send: remove it"},
		{Key: "http_server.tls_external", Note: "Herald has one listener: remove it"},
		{Key: "http_server.internal_tls", Note: "Herald has one listener: remove it"},
		{Key: "http_server.http3", Note: "Herald does not serve HTTP/3: remove it"},
		{Key: "log.file", Note: "Herald logs to standard error: redirect it, or let the service manager collect it"},
		{Key: "engine.redis.connect_timeout", Note: "Herald uses the Redis client's timeouts: remove it"},
		{Key: "engine.redis.io_timeout", Note: "Herald uses the Redis client's timeouts: remove it"},
		{Key: "engine.redis.force_resp2", Note: "remove it"},
		{Key: "engine.redis.client_name", Note: "remove it"},
		{Key: "broker", Note: "Herald's engine is broker and presence store in one: set engine.type ('memory', 'redis', 'postgres', or 'nats' with engine.nats.presence: redis)"},
		{Key: "presence_manager", Note: "Herald's engine is broker and presence store in one: set engine.type ('memory', 'redis', 'postgres', or 'nats' with engine.nats.presence: redis)"},
		{Key: "map_broker", Note: "Herald has no map subscriptions: remove it"},
		{Key: "client.token.jwks_public_endpoint", Note: "Herald in this build does not verify tokens against a JWKS endpoint: use rsa_public_key or ecdsa_public_key"},
		{Key: "client.token.audience_regex", Note: "Herald in this build matches 'aud' exactly: use client.token.audience"},
		{Key: "client.token.issuer_regex", Note: "Herald in this build matches 'iss' exactly: use client.token.issuer"},
		{Key: "client.token.user_id_claim", Note: "Herald in this build reads the user from 'sub'", values: []string{"sub"}},
		{Key: "client.subscription_token", Note: "Herald in this build checks subscription tokens with the keys of client.token: remove it, or sign subscription tokens with those keys"},
		{Key: "client.presence_update_interval", Note: "Herald refreshes presence on its own schedule within client.presence_ttl: remove it", values: []string{"27s"}},
		{Key: "client.concurrency", Note: "Herald handles each connection's commands in order: remove it"},
		{Key: "client.channel_position_check_delay", Note: "Herald checks stream positions on its own schedule: remove it", values: []string{"40s"}},
		{Key: "client.channel_position_max_time_lag", Note: "remove it"},
		{Key: "client.connection_rate_limit", Note: "Herald limits new connections per client address: websocket.ip_rate_limit"},
		{Key: "client.connect_include_server_time", Note: "Herald does not send the server time in connect replies: remove it"},
		{Key: "client.insecure_skip_token_signature_verify", Note: "Herald always verifies token signatures; for development use client.insecure"},
		{Key: "client.user_id_http_header", Note: "Herald takes the user from a token or the connect proxy: use the connect proxy with http_headers to read a header"},
		{Key: "client.subscribe_to_user_personal_channel", Note: "Herald has no automatic personal channel: subscribe from the connect proxy ('channels' in its result) or in the token"},
		{Key: "client.connect_code_to_unidirectional_disconnect", Note: "Herald has no code transforms: remove it"},
		{Key: "client.allowed_delta_types", Note: "Herald sets allowed_delta_types per namespace: move it to channel.without_namespace and channel.namespaces[]"},
		{Key: "channel.namespaces[].force_recovery_mode", Note: "Herald in this build recovers from the stream only ('stream')", values: []string{"stream"}},
		{Key: "channel.namespaces[].delta_publish", Note: "Herald sends deltas only for publications that ask for them: remove it"},
		{Key: "channel.namespaces[].subscribe_stream_proxy_bidirectional", Note: "Herald has no subscribe-stream proxy in this build"},
		{Key: "channel.namespaces[].allow_tags_filter", Note: "Herald in this build has no publication tag filters"},
		{Key: "channel.private_prefix", Note: "Herald's channel syntax is fixed ('$' private prefix): remove it", values: []string{"$"}},
		{Key: "channel.namespace_boundary", Note: "Herald's channel syntax is fixed (':' namespace boundary): remove it", values: []string{":"}},
		{Key: "channel.user_boundary", Note: "Herald's channel syntax is fixed ('#' user boundary): remove it", values: []string{"#"}},
		{Key: "channel.user_separator", Note: "Herald's channel syntax is fixed (',' user separator): remove it", values: []string{","}},
		{Key: "rpc.ping.enabled", Note: "Herald has no built-in RPC ping method: remove it"},
		{Key: "rpc.ping.method", Note: "Herald has no built-in RPC ping method: remove it", values: []string{"ping"}},
		{Key: "rpc.namespace_boundary", Note: "Herald's RPC namespace boundary is ':': remove it", values: []string{":"}},
		{Key: "proxies[].grpc_metadata", Note: "Herald in this build has no gRPC transports to forward metadata from"},
		{Key: "proxies[].emulated_headers", Note: "Herald in this build forwards transport-level headers only (http_headers)"},
		{Key: "proxies[].http.status_to_code_transforms", Note: "Herald has no status code transforms: remove it"},
		{Key: "proxies[].grpc.credentials_key", Note: "needs Herald's gRPC proxy, not in this build"},
		{Key: "proxies[].grpc.credentials_value", Note: "needs Herald's gRPC proxy, not in this build"},
		{Key: "proxies[].grpc.compression", Note: "needs Herald's gRPC proxy, not in this build"},
		{Key: "proxies[].grpc.static_metadata", Note: "needs Herald's gRPC proxy, not in this build"},
		{Key: "http_api.external", Note: "", any: true},
		{Key: "grpc_api", Note: "Herald in this build has no gRPC server API: use the HTTP API"},
		{Key: "uni_grpc", Note: "Herald in this build has no unidirectional gRPC transport"},
		{Key: "consumers", Note: "Herald in this build has no consumers: publish through the server API"},
		{Key: "websocket.disabled", Note: "Herald always serves WebSocket, at websocket.handler_prefix"},
		{Key: "websocket.read_buffer_size", Note: "Herald sizes its buffers itself (see websocket.poller): remove it"},
		{Key: "websocket.write_buffer_size", Note: "Herald sizes its buffers itself: remove it"},
		{Key: "websocket.use_write_buffer_pool", Note: "Herald pools its buffers itself: remove it", any: true},
		{Key: "uni_websocket.compression", Note: "the unidirectional WebSocket shares the websocket section's options: set websocket.compression"},
		{Key: "uni_websocket.compression_min_size", Note: "set websocket.compression_min_size"},
		{Key: "uni_websocket.compression_level", Note: "set websocket.compression_level", values: []string{"1"}},
		{Key: "uni_websocket.read_buffer_size", Note: "remove it"},
		{Key: "uni_websocket.write_buffer_size", Note: "remove it"},
		{Key: "uni_websocket.use_write_buffer_pool", Note: "", any: true},
		{Key: "uni_websocket.write_timeout", Note: "set websocket.write_timeout", values: []string{"1s", "1000ms"}},
		{Key: "uni_websocket.message_size_limit", Note: "set websocket.message_size_limit", values: []string{"65536"}},
		{Key: "uni_websocket.join_push_messages", Note: "Herald sends one push per frame on the unidirectional WebSocket"},
		{Key: "uni_sse.connect_code_to_http_response", Note: "Herald has no code transforms: remove it"},
		{Key: "uni_http_stream.connect_code_to_http_response", Note: "Herald has no code transforms: remove it"},
		{Key: "webtransport", Note: "Herald has no WebTransport: remove it"},
		{Key: "admin.web_path", Note: "Herald serves its own admin UI: remove it"},
		{Key: "admin.web_proxy_address", Note: "Herald serves its own admin UI: remove it"},
		{Key: "admin.external", Note: "", any: true},
		{Key: "prometheus.enabled", Note: "Herald always serves the metrics, at prometheus.handler_prefix", any: true},
		{Key: "prometheus.instrument_http_handlers", Note: "remove it"},
		{Key: "swagger", Note: "Herald serves no Swagger UI: the API is described in docs/api.md"},
		{Key: "debug.enabled", Note: "Herald serves pprof on the admin listener: set admin.address"},
		{Key: "debug.handler_prefix", Note: "pprof is at '/debug/pprof/' on the admin listener", values: []string{"/debug/pprof"}},
		{Key: "dev", Note: "remove it"},
		{Key: "init", Note: "Herald has no connection init endpoint: remove it"},
		{Key: "opentelemetry.api", Note: "Herald traces API requests whenever opentelemetry.enabled is on", any: true},
		{Key: "opentelemetry.consuming", Note: "Herald has no consumers to trace"},
		{Key: "graphite", Note: "Herald exports Prometheus metrics only, at prometheus.handler_prefix"},
		{Key: "usage_stats", Note: "Herald sends no usage statistics", any: true},
		{Key: "node.info_metrics_aggregate_interval", Note: "remove it", values: []string{"60s", "1m0s"}},
		{Key: "pid_file", Note: "Herald writes no PID file: let the service manager track the process"},
		{Key: "enable_unreleased_features", Note: "remove it"},
	}
}

// cfTables are both tables, indexed by key.
type cfTables struct {
	rules     []centrifugoRule
	notes     []centrifugoNote
	ruleByKey map[string]centrifugoRule
	noteByKey map[string]centrifugoNote
}

func newCFTables() *cfTables {
	t := &cfTables{rules: centrifugoRules(), notes: centrifugoMissing(),
		ruleByKey: map[string]centrifugoRule{}, noteByKey: map[string]centrifugoNote{}}
	for _, r := range t.rules {
		t.ruleByKey[r.Key] = r
	}
	for _, n := range t.notes {
		t.noteByKey[n.Key] = n
	}
	return t
}

// hasRuleUnder reports whether a table has a key below rule, so that a
// section Herald does not have is walked for them.
func (t *cfTables) hasRuleUnder(rule string) bool {
	for _, r := range t.rules {
		if strings.HasPrefix(r.Key, rule+".") {
			return true
		}
	}
	for _, n := range t.notes {
		if strings.HasPrefix(n.Key, rule+".") {
			return true
		}
	}
	return false
}

// isOff reports whether a value is the zero of its kind: absent, false,
// empty, 0, or a mapping of such values ({"enabled": false}).
func isOff(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case string:
		return x == "" || x == "false" || x == "0"
	case int64:
		return x == 0
	case float64:
		return x == 0
	case []any:
		return len(x) == 0
	case map[string]any:
		for _, e := range x {
			if !isOff(e) {
				return false
			}
		}
		return true
	}
	return false
}

// isOn reads a boolean the way Centrifugo does (strconv.ParseBool for
// environment values).
func isOn(v any) (on bool, ok bool) {
	switch x := v.(type) {
	case nil:
		return false, true
	case bool:
		return x, true
	case string:
		b, err := strconv.ParseBool(x)
		return b, err == nil
	}
	return false, false
}

// rename copies the value to a Herald key: relative to the list item for
// a key with "[]", else from the top. When Herald has no such key, the
// value is refused unless it is off.
func rename(herald string) func(m *cfMapper, c cfCtx, v any) {
	return func(m *cfMapper, c cfCtx, v any) {
		root, t := m.out, configType
		if strings.Contains(c.rule, "[]") {
			root, t = c.item, c.itemType
		}
		typ := keyType(t, herald)
		if typ == nil || root == nil {
			if !isOff(v) {
				m.refuse(c.path, fmt.Sprintf("Herald in this build has no %s for it: remove it", herald))
			}
			return
		}
		if vm, ok := v.(map[string]any); ok && isSection(typ) {
			parent, last := root, herald
			if i := strings.LastIndex(herald, "."); i >= 0 {
				parent = ensureMapPath(root, herald[:i])
				last = herald[i+1:]
			}
			m.walk(vm, c.path, c.rule, ensureMap(parent, last), typ, c.item, c.itemType)
			return
		}
		setKey(root, herald, v)
	}
}

func ensureMapPath(root map[string]any, key string) map[string]any {
	for _, p := range strings.Split(key, ".") {
		root = ensureMap(root, p)
	}
	return root
}

// listenAddress joins http_server.address and http_server.port.
func listenAddress(m *cfMapper, c cfCtx, _ any) {
	host, port := "", "8000"
	if h, ok := c.src["address"]; ok && h != nil {
		host = fmt.Sprint(h)
	}
	if p, ok := c.src["port"]; ok && p != nil {
		port = fmt.Sprint(p)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		m.refuse(c.path, fmt.Sprintf("%q: want a port number", port))
		return
	}
	m.out["address"] = net.JoinHostPort(host, port)
}

func logLevel(m *cfMapper, c cfCtx, v any) {
	level := strings.ToLower(fmt.Sprint(v))
	switch level {
	case "trace":
		level = "debug"
	case "none", "fatal":
		level = "error"
	}
	setKey(m.out, "log.level", level)
}

// proxyItemType is the type of an item of Herald's proxies.
func proxyItemType() reflect.Type { return keyType(configType, "proxies").Elem() }

// makeProxy turns a Centrifugo proxy object into a Herald proxies item
// with the given name.
func (m *cfMapper) makeProxy(c cfCtx, v any, name string) {
	vm, ok := v.(map[string]any)
	if !ok {
		m.refuse(c.path, "want a proxy object (endpoint, timeout, ...)")
		return
	}
	body := make(map[string]any, len(vm))
	for k, e := range vm {
		if k != "enabled" {
			body[k] = e
		}
	}
	if e, _ := body["endpoint"].(string); e == "" {
		m.refuse(c.path+".endpoint", "required: the backend URL the proxy calls")
		return
	}
	t := proxyItemType()
	d := map[string]any{}
	m.walk(body, c.path, "proxies[]", d, t, d, t)
	d["name"] = name
	m.proxies = append(m.proxies, d)
	m.defined[name] = true
}

// clientProxy maps client.proxy.connect or refresh: an object with
// 'enabled' in Centrifugo, a proxy's name in Herald.
func clientProxy(key string) func(m *cfMapper, c cfCtx, v any) {
	return func(m *cfMapper, c cfCtx, v any) {
		vm, ok := v.(map[string]any)
		if !ok {
			m.refuse(c.path, "want Centrifugo's proxy object: {enabled: true, endpoint: ...}")
			return
		}
		on, ok := isOn(vm["enabled"])
		if !ok {
			m.refuse(c.path+".enabled", "want true or false")
			return
		}
		if !on {
			return // configured but not enabled: Centrifugo does not use it either
		}
		m.makeProxy(c, v, key)
		setKey(m.out, key, key)
	}
}

// defaultProxy maps channel.proxy.* and rpc.proxy: unnamed proxies that
// namespaces use when they enable a proxy without naming one. One with no
// endpoint is not defined.
func defaultProxy(name string) func(m *cfMapper, c cfCtx, v any) {
	return func(m *cfMapper, c cfCtx, v any) {
		if isOff(v) {
			return
		}
		m.makeProxy(c, v, name)
	}
}

// namespaceProxy maps <event>_proxy_enabled (with <event>_proxy_name) of a
// channel namespace to Herald's <event>_proxy.
func namespaceProxy(event string) func(m *cfMapper, c cfCtx, v any) {
	return func(m *cfMapper, c cfCtx, v any) {
		on, ok := isOn(v)
		if !ok {
			m.refuse(c.path, "want true or false")
			return
		}
		if !on {
			return
		}
		herald := event + "_proxy"
		if keyType(c.itemType, herald) == nil {
			m.refuse(c.path, fmt.Sprintf("Herald in this build has no %s proxy", strings.ReplaceAll(event, "_", "-")))
			return
		}
		name := proxyNameOf(c.src[event+"_proxy_name"], "channel.proxy."+event)
		if name == "channel.proxy."+event {
			m.needed[name] = c.path
		}
		c.item[herald] = name
	}
}

// rpcProxy maps proxy_enabled (with proxy_name) of an RPC namespace, or of
// rpc.without_namespace.
func rpcProxy(m *cfMapper, c cfCtx, v any) {
	on, ok := isOn(v)
	if !ok {
		m.refuse(c.path, "want true or false")
		return
	}
	if !on {
		return
	}
	name := proxyNameOf(c.src["proxy_name"], "rpc.proxy")
	if name == "rpc.proxy" {
		m.needed[name] = c.path
	}
	if c.item != nil {
		c.item["proxy"] = name
		return
	}
	setKey(m.out, "rpc.proxy", name)
}

// proxyNameOf is the Herald proxy a Centrifugo *_proxy_name refers to:
// "" and "default" are the unnamed proxy of the section.
func proxyNameOf(v any, unnamed string) string {
	if v == nil {
		return unnamed
	}
	s := fmt.Sprint(v)
	if s == "" || s == "default" {
		return unnamed
	}
	return s
}

// listenerTLS maps Centrifugo's TLS object of a listener (http_server.tls,
// grpc_api.tls, uni_grpc.tls) to Herald's certificate files under prefix.
// Centrifugo v6 names them cert_pem, key_pem and client_ca_pem (a path, or
// inline PEM, which Herald refuses); v5 named them *_pem_file.
func listenerTLS(prefix string) func(m *cfMapper, c cfCtx, v any) {
	return func(m *cfMapper, c cfCtx, v any) {
		vm, ok := v.(map[string]any)
		if !ok {
			m.refuse(c.path, "want a TLS object: {enabled: true, cert_pem: FILE, key_pem: FILE}")
			return
		}
		on, ok := isOn(vm["enabled"])
		if !ok {
			m.refuse(c.path+".enabled", "want true or false")
			return
		}
		if !on {
			return // not used, as in Centrifugo
		}
		file := func(key string) (string, bool) {
			s, _ := vm[key].(string)
			if strings.Contains(s, "-----BEGIN") || strings.Contains(s, "\n") {
				m.refuse(c.path+"."+key, "inline PEM: Herald reads certificates from files (and reloads them when they change); write it to a file and give its path")
				return "", false
			}
			return s, s != ""
		}
		for _, k := range sortedKeys(vm) {
			switch k {
			case "enabled", "server_ca_pem", "server_ca_pem_file", "insecure_skip_verify", "server_name":
				// Options of outgoing connections: Centrifugo does not use them for its listener either.
			case "cert_pem", "cert_pem_file":
				if f, ok := file(k); ok {
					setKey(m.out, prefix+".cert_file", f)
				}
			case "key_pem", "key_pem_file":
				if f, ok := file(k); ok {
					setKey(m.out, prefix+".key_file", f)
				}
			case "client_ca_pem", "client_ca_pem_file":
				if f, ok := file(k); ok {
					setKey(m.out, prefix+".client_ca_file", f)
					setKey(m.out, prefix+".client_auth", "require")
				}
			default:
				m.refuse(c.path+"."+k, "not a key of Centrifugo's TLS object that Herald knows: remove it")
			}
		}
	}
}

// autocert maps http_server.tls_autocert to tls_autocert, whose keys have
// the same names but one.
func autocert(m *cfMapper, c cfCtx, v any) {
	vm, ok := v.(map[string]any)
	if !ok {
		m.refuse(c.path, "want a mapping of keys")
		return
	}
	t := keyType(configType, "tls_autocert")
	m.walk(vm, c.path, c.rule, ensureMap(m.out, "tls_autocert"), t, c.item, c.itemType)
}

// refuseUnlessOff takes a value that is off and refuses any other with
// the rule's note.
func refuseUnlessOff(m *cfMapper, c cfCtx, v any) {
	if !isOff(v) {
		m.refuse(c.path, m.tables.ruleByKey[c.rule].Note)
	}
}

// proxyName: a *_proxy_name is read by its *_proxy_enabled rule.
func proxyName(*cfMapper, cfCtx, any) {}

// withoutNamespace maps channel.without_namespace with the rules of a
// namespace.
func withoutNamespace(m *cfMapper, c cfCtx, v any) {
	vm, ok := v.(map[string]any)
	if !ok {
		m.refuse(c.path, "want a mapping of namespace options")
		return
	}
	t := keyType(configType, "channel.without_namespace")
	d := ensureMapPath(m.out, "channel.without_namespace")
	m.walk(vm, c.path, "channel.namespaces[]", d, t, d, t)
}

// historyMetaTTL becomes the history_meta_ttl of every namespace that sets
// none, once they are all read.
func historyMetaTTL(m *cfMapper, c cfCtx, v any) {
	if msg := centrifugoDuration(v); msg != "" {
		m.refuse(c.path, msg)
		return
	}
	m.after = append(m.after, func() {
		ch := ensureMap(m.out, "channel")
		targets := []map[string]any{ensureMap(ch, "without_namespace")}
		if list, ok := ch["namespaces"].([]any); ok {
			for _, e := range list {
				if ns, ok := e.(map[string]any); ok {
					targets = append(targets, ns)
				}
			}
		}
		for _, ns := range targets {
			if _, set := ns["history_meta_ttl"]; !set {
				ns["history_meta_ttl"] = v
			}
		}
	})
}

func adminPath(m *cfMapper, _ cfCtx, v any) {
	if isOff(v) || v == "/" {
		return
	}
	setKey(m.out, "admin.ui.path", v)
}

func apiDisabled(m *cfMapper, c cfCtx, v any) {
	on, ok := isOn(v)
	if !ok {
		m.refuse(c.path, "want true or false")
		return
	}
	if on {
		m.after = append(m.after, func() {
			setKey(m.out, "http_api.key", "")
			setKey(m.out, "http_api.insecure", false)
		})
	}
}

// redisAddress maps engine.redis.address: a string or a list, as
// 'host:port' or redis:// URLs; several are shards, in Herald as in
// Centrifugo (docs/engines.md, "Sharding").
func redisAddress(m *cfMapper, c cfCtx, v any) {
	out, ok := m.redisHostPorts(c, v, "want an address or a list of addresses")
	switch {
	case !ok || len(out) == 0:
	case len(out) == 1:
		setKey(m.out, "engine.redis.address", out[0])
	default:
		setKey(m.out, "engine.redis.address", out)
	}
}

// clusterAddress maps engine.redis.cluster_address, which Centrifugo reads
// as one Redis Cluster per entry, each entry its seed nodes separated by
// commas. Herald takes one Cluster.
func clusterAddress(m *cfMapper, c cfCtx, v any) {
	shards, ok := m.commaShards(c, v, "want one entry, the Cluster's seed addresses separated by commas")
	switch {
	case !ok || len(shards) == 0:
	case len(shards) > 1:
		m.refuse(c.path, fmt.Sprintf("%d entries are %d Redis Clusters, shards in Centrifugo; Herald's shards are standalone servers or Sentinel sets: give one Cluster's seed addresses in one entry, separated by commas", len(shards), len(shards)))
	default:
		setKey(m.out, "engine.redis.addresses", shards[0])
		setKey(m.out, "engine.redis.cluster", true)
	}
}

// commaShards reads a list of shards, each entry addresses separated by
// commas, as Centrifugo's cluster_address and sentinel_address are.
func (m *cfMapper) commaShards(c cfCtx, v any, want string) ([][]any, bool) {
	entries, ok := stringList(v)
	if !ok {
		m.refuse(c.path, want)
		return nil, false
	}
	var shards [][]any
	for _, e := range entries {
		var parts []any
		for _, p := range strings.Split(e, ",") {
			if p = strings.TrimSpace(p); p != "" {
				parts = append(parts, p)
			}
		}
		if len(parts) == 0 {
			m.refuse(c.path, fmt.Sprintf("%q: no address", e))
			return nil, false
		}
		out, ok := m.redisHostPorts(c, parts, want)
		if !ok {
			return nil, false
		}
		shards = append(shards, out)
	}
	return shards, true
}

// sentinelAddress maps engine.redis.sentinel_address, which Centrifugo
// reads as one shard per entry, each entry the shard's Sentinels separated
// by commas, all shards with the one sentinel_master_name and db. One
// entry is engine.redis.addresses; several are engine.redis.shards, which
// take the master name and database once the whole file is read.
func sentinelAddress(m *cfMapper, c cfCtx, v any) {
	shards, ok := m.commaShards(c, v, "want a list of shards, each its Sentinels' addresses separated by commas")
	switch {
	case !ok || len(shards) == 0:
	case len(shards) == 1:
		setKey(m.out, "engine.redis.addresses", shards[0])
	default:
		m.after = append(m.after, func() {
			r := ensureMap(ensureMap(m.out, "engine"), "redis")
			list := make([]any, len(shards))
			for i, addrs := range shards {
				item := map[string]any{"addresses": addrs}
				if name, ok := r["sentinel_master"]; ok {
					item["sentinel_master"] = name
				}
				if db, ok := r["db"]; ok {
					item["db"] = db
				}
				list[i] = item
			}
			// Centrifugo reads no address when sentinel_address is set.
			delete(r, "sentinel_master")
			delete(r, "db")
			delete(r, "address")
			r["shards"] = list
		})
	}
}

// redisHostPorts reads a string or a list of Redis addresses ('host:port'
// or redis:// URLs) as host:port values; false, with the problem reported,
// when one cannot be read.
func (m *cfMapper) redisHostPorts(c cfCtx, v any, want string) ([]any, bool) {
	addrs, ok := stringList(v)
	if !ok {
		m.refuse(c.path, want)
		return nil, false
	}
	out := make([]any, 0, len(addrs))
	for _, a := range addrs {
		hostPort, err := m.redisURL(a)
		if err != nil {
			m.refuse(c.path, err.Error())
			return nil, false
		}
		out = append(out, hostPort)
	}
	return out, true
}

// redisURL reads 'host:port' or 'redis://user:password@host:port/db',
// setting the credentials and database it carries.
func (m *cfMapper) redisURL(s string) (string, error) {
	if !strings.Contains(s, "://") {
		return s, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("%q: not a valid address: %v", s, err)
	}
	switch u.Scheme {
	case "redis", "tcp":
	case "rediss":
		return "", fmt.Errorf("%q: TLS to Redis is set in engine.redis.tls of the Herald file (herald config convert): give the address as host:port", s)
	default:
		return "", fmt.Errorf("%q: want host:port or a redis:// URL", s)
	}
	if u.User != nil {
		if name := u.User.Username(); name != "" {
			setKey(m.out, "engine.redis.username", name)
		}
		if pw, ok := u.User.Password(); ok {
			setKey(m.out, "engine.redis.password", pw)
		}
	}
	if db := strings.Trim(u.Path, "/"); db != "" {
		n, err := strconv.Atoi(db)
		if err != nil {
			return "", fmt.Errorf("%q: the database number %q is not a number", s, db)
		}
		setKey(m.out, "engine.redis.db", int64(n))
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "6379")
	}
	return host, nil
}

func stringList(v any) ([]string, bool) {
	switch x := v.(type) {
	case nil:
		return nil, true
	case string:
		if x == "" {
			return nil, true
		}
		return strings.Fields(x), true
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}
