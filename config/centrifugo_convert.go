package config

import (
	"fmt"
	"net"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/hub"
)

// The converters of the Centrifugo key table (centrifugo_keys.go): each
// writes what one Centrifugo key means in Herald's tree, reading what it
// needs (the Herald key, a proxy's name) from its row, c.row.

// heraldTarget is where the row of c writes its (first) Herald key:
// below the list item for a key with "[]", else from the top of the tree;
// with the type of that mapping.
func (m *cfMapper) heraldTarget(c cfCtx) (root map[string]any, key string, t reflect.Type) {
	key, _, _ = strings.Cut(c.row.Herald, ", ")
	if i := strings.LastIndex(key, "[]."); i >= 0 && strings.Contains(c.rule, "[]") {
		return c.item, key[i+len("[]."):], c.itemType
	}
	return m.out, key, configType
}

// rename copies the value to the row's Herald key as it would be copied
// to a key of the same name: sections and lists of sections key by key.
func rename(m *cfMapper, c cfCtx, v any) {
	root, herald, t := m.heraldTarget(c)
	typ := keyType(t, herald)
	if typ == nil || root == nil {
		// TestCentrifugoKeysMatchHerald keeps rows from naming keys Herald
		// does not have; this names the row if one does anyway.
		m.refuse(c.path, fmt.Sprintf("the key table maps it to %s, which Herald does not have", c.row.Herald))
		return
	}
	if _, isMap := v.(map[string]any); isSection(typ) && !isMap && v != nil {
		m.refuse(c.path, "want a mapping of keys")
		return
	}
	parent, last := root, herald
	if i := strings.LastIndex(herald, "."); i >= 0 {
		parent = ensureMapPath(root, herald[:i])
		last = herald[i+1:]
	}
	m.copyValue(cfCtx{src: c.src, key: last, path: c.path, rule: c.rule, row: c.row, dst: parent, item: c.item, itemType: c.itemType}, v, typ)
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

// internalAddress maps http_server.internal_address and internal_port to
// internal.address. As Centrifugo v6.9.1 does (internal/app/mux.go), an
// empty internal address is the main one, an empty internal port the main
// one, and an internal listener at the main listener's address is none.
func internalAddress(m *cfMapper, c cfCtx, _ any) {
	str := func(k, def string) string {
		if v, ok := c.src[k]; ok && v != nil && fmt.Sprint(v) != "" {
			return fmt.Sprint(v)
		}
		return def
	}
	mainHost, mainPort := str("address", ""), str("port", "8000")
	host, port := str("internal_address", mainHost), str("internal_port", mainPort)
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		m.refuse(c.path, fmt.Sprintf("%q: want a port number", port))
		return
	}
	if host == mainHost && port == mainPort {
		return
	}
	setKey(m.out, "internal.address", net.JoinHostPort(host, port))
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

// enabledObject reads a Centrifugo object with an 'enabled' key (a proxy,
// a TLS object); nil when it is not enabled, and so not used, as in
// Centrifugo, or when it is not an object (refused: want says what to write).
func (m *cfMapper) enabledObject(c cfCtx, v any, want string) map[string]any {
	vm, ok := v.(map[string]any)
	if !ok {
		m.refuse(c.path, want)
		return nil
	}
	on, ok := isOn(vm["enabled"])
	if !ok {
		m.refuse(c.path+".enabled", "want true or false")
		return nil
	}
	if !on {
		return nil
	}
	return vm
}

// clientProxy maps client.proxy.connect or refresh: an object with
// 'enabled' in Centrifugo, a proxy's name in Herald. The proxy is named
// after the key, which is also the Herald key that names it.
func clientProxy(m *cfMapper, c cfCtx, v any) {
	key := c.row.Key
	if m.enabledObject(c, v, "want Centrifugo's proxy object: {enabled: true, endpoint: ...}") == nil {
		return
	}
	m.makeProxy(c, v, key)
	setKey(m.out, key, key)
}

// defaultProxy maps channel.proxy.* and rpc.proxy: unnamed proxies that
// namespaces use when they enable a proxy without naming one. One with no
// endpoint is not defined. The proxy is named after the key.
func defaultProxy(m *cfMapper, c cfCtx, v any) {
	if isOff(v) {
		return
	}
	// Centrifugo's defaultconfig writes each of them with an empty
	// endpoint: not configured, as in Centrifugo, which calls a proxy only
	// when a namespace enables it (and then refuses one without endpoint,
	// as the needed-proxy check here does).
	if vm, ok := v.(map[string]any); ok {
		if e, _ := vm["endpoint"].(string); e == "" {
			return
		}
	}
	m.makeProxy(c, v, c.row.Key)
}

// stateProxy maps Centrifugo PRO's channel.proxy.state: the proxy of
// channel state events, for every namespace with state_proxy_enabled.
func stateProxy(m *cfMapper, c cfCtx, v any) {
	if isOff(v) {
		return
	}
	if vm, ok := v.(map[string]any); ok {
		if e, _ := vm["endpoint"].(string); e == "" {
			return // written but not configured, as defaultProxy reads it
		}
	}
	m.makeProxy(c, v, c.row.Key)
	ensureMapPath(m.out, "channel")["state_proxy"] = c.row.Key
}

// proxyEnabled maps <event>_proxy_enabled (with <event>_proxy_name) of a
// channel namespace, and proxy_enabled (with proxy_name) of an RPC one or
// of rpc.without_namespace, to the Herald key of the row, which names the
// proxy: the one proxy_name names, or the section's unnamed one
// (channel.proxy.<event>, rpc.proxy).
func proxyEnabled(m *cfMapper, c cfCtx, v any) {
	on, ok := isOn(v)
	if !ok {
		m.refuse(c.path, "want true or false")
		return
	}
	if !on {
		return
	}
	prefix := strings.TrimSuffix(c.key, "proxy_enabled")
	section, _, _ := strings.Cut(c.row.Key, ".")
	unnamed := section + ".proxy"
	if event := strings.TrimSuffix(prefix, "_"); event != "" {
		if strings.Contains(c.row.Key, ".map.") {
			// A map section's publish and remove proxies are the
			// section's map_publish and map_remove.
			event = "map_" + event
		}
		unnamed += "." + event
	}
	name := proxyNameOf(c.src[prefix+"proxy_name"], unnamed)
	if name == unnamed {
		m.needed[name] = c.path
	}
	root, herald, _ := m.heraldTarget(c)
	setKey(root, herald, name)
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
// grpc_api.tls, uni_grpc.tls) to the certificate files of Herald's tls
// section that the row names.
func listenerTLS(m *cfMapper, c cfCtx, v any) { m.convertTLS(c, v, true) }

// clientTLS maps Centrifugo's TLS object of a connection Herald makes
// (engine.redis.tls, proxies[].grpc.tls) to Herald's tls section that the
// row names.
func clientTLS(m *cfMapper, c cfCtx, v any) { m.convertTLS(c, v, false) }

// tlsKey is what a key of Centrifugo's TLS object becomes in Herald's tls
// section of a listener or of an outgoing connection: herald "" for a key
// that does not apply there (Centrifugo does not use it there either),
// file for a certificate or key (a file key; the PEM text goes to its
// inlineKey). known is
// false for a key the object does not have. Centrifugo v6 names the files
// cert_pem, key_pem, ...; v5 named them *_pem_file.
func tlsKey(key string, listener bool) (herald string, file, known bool) {
	switch strings.TrimSuffix(key, "_file") {
	case "enabled":
		return "", false, true
	case "cert_pem":
		return "cert_file", true, true
	case "key_pem":
		return "key_file", true, true
	case "client_ca_pem":
		if listener {
			return "client_ca_file", true, true
		}
		return "", false, true
	case "server_ca_pem":
		if listener {
			return "", false, true
		}
		return "ca_file", true, true
	case "server_name", "insecure_skip_verify":
		if listener {
			return "", false, true
		}
		return key, false, true
	}
	return "", false, false
}

// convertTLS maps an enabled TLS object; a disabled one is not used, as in
// Centrifugo. A certificate given as a file path becomes Herald's file key
// (reloaded when it changes), one given as PEM text or base64-encoded PEM
// the inline key (centrifugoPEM).
func (m *cfMapper) convertTLS(c cfCtx, v any, listener bool) {
	vm := m.enabledObject(c, v, "want a TLS object: {enabled: true, cert_pem: FILE, key_pem: FILE}")
	if vm == nil {
		return
	}
	root, prefix, _ := m.heraldTarget(c)
	for _, k := range sortedKeys(vm) {
		herald, file, known := tlsKey(k, listener)
		switch {
		case !known:
			m.refuse(c.path+"."+k, "not a key of Centrifugo's TLS object that Herald knows: remove it")
		case herald == "":
		case file:
			s, _ := vm[k].(string)
			if s == "" {
				continue
			}
			inline, isPath, ok := centrifugoPEM(s)
			switch {
			case !ok:
				m.refuse(c.path+"."+k, "invalid PEM data: not a valid file path, base64-encoded PEM content, or raw PEM content (Centrifugo takes each of the three)")
				continue
			case isPath:
				setKey(root, prefix+"."+herald, s)
			default:
				setKey(root, prefix+"."+inlineKey(herald), inline)
			}
			if herald == "client_ca_file" {
				setKey(root, prefix+".client_auth", "require")
			}
		default:
			setKey(root, prefix+"."+herald, vm[k])
		}
	}
	if !listener {
		setKey(root, prefix+".enabled", true)
	}
}

// proxyName: a *_proxy_name is read by its *_proxy_enabled rule.
func proxyName(*cfMapper, cfCtx, any) {}

// sharedPollDefaultProxy is the proxy Centrifugo's shared_poll namespaces
// poll when they name none: channel.proxy.shared_poll_refresh, which the
// importer turns into a proxy of this name (defaultProxy).
const sharedPollDefaultProxy = "channel.proxy.shared_poll_refresh"

// subscriptionType copies a namespace's subscription_type and, for
// shared_poll, names its refresh proxy: shared_poll.proxy_name, or when
// that is absent, empty or "default" the unnamed one, as Centrifugo
// v6.9.1 defaults it (internal/app/proxy.go, internal/config/validate.go).
func subscriptionType(m *cfMapper, c cfCtx, v any) {
	rename(m, c, v)
	if fmt.Sprint(v) != string(hub.SubscriptionSharedPoll) || c.item == nil {
		return
	}
	sp, _ := c.src["shared_poll"].(map[string]any)
	name := proxyNameOf(sp["proxy_name"], sharedPollDefaultProxy)
	if name == sharedPollDefaultProxy {
		m.needed[name] = c.path
	}
	ensureMap(c.item, "shared_poll")["proxy_name"] = name
}

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
	m.namespaceDefault("history_meta_ttl", v)
}

// publicationDataFormat, Centrifugo's global default of the namespace
// option (centrifugo v6.9.1 internal/config/container.go), becomes the
// publication_data_format of every namespace that sets none.
func publicationDataFormat(m *cfMapper, _ cfCtx, v any) {
	m.namespaceDefault("publication_data_format", v)
}

// allowedDeltaTypes, an older Centrifugo's global key, becomes the
// allowed_delta_types of every namespace that sets none.
func allowedDeltaTypes(m *cfMapper, _ cfCtx, v any) {
	m.namespaceDefault("allowed_delta_types", v)
}

// namespaceDefault sets the namespace option key to v in
// channel.without_namespace and every namespace that sets none, once they
// are all read.
func (m *cfMapper) namespaceDefault(key string, v any) {
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
			if _, set := ns[key]; !set {
				ns[key] = v
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
	if ok && len(shards) > 0 {
		m.plainSentinels(c)
	}
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

// unixValidUntil maps hmac_previous_secret_key_valid_until: a Unix time in
// seconds in Centrifugo, where 0 (its default) means no limit
// (internal/jwtverify, HMACPreviousSecretKeyValidUntil), an RFC 3339 time
// in Herald, where empty means no limit.
func unixValidUntil(m *cfMapper, c cfCtx, v any) {
	var secs int64
	switch x := v.(type) {
	case nil:
		return
	case int64:
		secs = x
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			m.refuse(c.path, fmt.Sprintf("%q: want a Unix time in seconds, as Centrifugo reads it", x))
			return
		}
		secs = n
	default:
		m.refuse(c.path, fmt.Sprintf("%v: want a Unix time in whole seconds, as Centrifugo reads it", v))
		return
	}
	if secs <= 0 {
		return
	}
	root, herald, _ := m.heraldTarget(c)
	parent := ensureMapPath(root, strings.TrimSuffix(herald, "."+c.key))
	parent[c.key] = time.Unix(secs, 0).UTC().Format(time.RFC3339)
}

// enabledRename maps a section Centrifugo uses only with 'enabled: true'
// (client.subscription_token): renamed then, and not used otherwise, as
// in Centrifugo, so that its defaults do not configure Herald.
func enabledRename(m *cfMapper, c cfCtx, v any) {
	if m.enabledObject(c, v, "want a mapping of keys") == nil {
		return
	}
	rename(m, c, v)
}

// rateLimitRedis is Centrifugo PRO's client.rate_limit.redis_user_command.redis
// (centrifugal.dev docs/pro/rate_limiting.md, "Redis per user rate
// limit"): 'reuse_from_engine: true', the engine's Redis, where Herald
// keeps the buckets when its own key names no server; or a Redis of its
// own, "matches Centrifugo Redis engine configuration", which becomes
// Herald's key of the same name, its keys converted as engine.redis's.
func rateLimitRedis(m *cfMapper, c cfCtx, v any) {
	vm, ok := v.(map[string]any)
	if !ok {
		m.refuse(c.path, "want an object: 'reuse_from_engine: true', or the keys of engine.redis")
		return
	}
	if reuse, _ := isOn(vm["reuse_from_engine"]); reuse {
		for _, k := range sortedKeys(vm) {
			if k != "reuse_from_engine" && !isOff(vm[k]) {
				m.refuse(c.path+"."+k, "not with 'reuse_from_engine: true', which takes the engine's Redis")
			}
		}
		return
	}
	own := map[string]any{}
	for k, x := range vm {
		if k != "reuse_from_engine" {
			own[k] = x
		}
	}
	if len(own) == 0 {
		m.refuse(c.path, "want 'reuse_from_engine: true' or a Redis (address, ...) for the buckets")
		return
	}
	// The engine.redis rows write under engine.redis from the top of the
	// tree: they run on a tree of their own, whose engine.redis is then
	// this key's.
	sub := &cfMapper{tables: m.tables, out: map[string]any{}, defined: map[string]bool{}, needed: map[string]string{}}
	sub.walk(own, c.path, "engine.redis", ensureMapPath(sub.out, "engine.redis"), keyType(configType, "engine.redis"), nil, nil)
	for _, f := range sub.after {
		f()
	}
	m.ps = append(m.ps, sub.ps...)
	m.unknown = append(m.unknown, sub.unknown...)
	m.notNeeded = append(m.notNeeded, sub.notNeeded...)
	root, herald, _ := m.heraldTarget(c)
	setKey(root, herald, ensureMapPath(sub.out, "engine.redis"))
}
