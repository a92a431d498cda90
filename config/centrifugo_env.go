package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
)

// Centrifugo's environment variables, by its naming rules: CENTRIFUGO_ and
// the key in upper case with '_' for '.' (CENTRIFUGO_CLIENT_TOKEN_HMAC_SECRET_KEY);
// lists of strings separated by spaces; mappings as JSON. A variable
// overrides the file; one whose value is empty is not set, and leaves the
// file's value as it is. A CENTRIFUGO_ variable that names no option of
// Centrifugo's is a warning, as in Centrifugo (refused when strict),
// except the ones Centrifugo itself passes over (Kubernetes' service
// variables and its CENTRIFUGO_VAR_ ones).
//
// The lists of named objects (namespaces, RPC namespaces, proxies,
// consumers) are given either as a JSON array, which replaces the file's
// list, or as names separated by spaces, which are added to the file's
// list; then each option of an item has its own variable,
// CENTRIFUGO_CHANNEL_NAMESPACES_<NAME>_<OPTION>, the name in upper case with
// '_' for '.' and '-'. Two items whose names meet in one variable
// (chat-room, chat_room) both take it.
//
// All of this is how Centrifugo 6 reads its environment:
// internal/config/config.go (GetConfig: the per-item envconfig.Process
// calls, one per item, with the prefix from configtypes.NameForEnv),
// internal/configtypes/types.go (decodeToNamedSlice: empty leaves the list,
// "[...]" is JSON, anything else names separated by spaces appended to the
// list) and internal/config/envconfig/envconfig.go (processField: an empty
// value is not set; names upper-cased), in github.com/centrifugal/centrifugo.

// centrifugoLists are the lists of objects, with the key their items'
// rules are written under.
var centrifugoLists = []struct{ key, rule string }{
	{"channel.namespaces", "channel.namespaces[]"},
	{"rpc.namespaces", "rpc.namespaces[]"},
	{"proxies", "proxies[]"},
	{"consumers", "consumers[]"},
}

// centrifugoVars returns the CENTRIFUGO_ variables of environ.
func centrifugoVars(environ []string) map[string]string {
	vars := map[string]string{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && strings.HasPrefix(k, CentrifugoEnvPrefix) {
			vars[k] = v
		}
	}
	return vars
}

// centrifugoEnvName is the variable of a dotted key.
func centrifugoEnvName(key string) string {
	return CentrifugoEnvPrefix + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(key))
}

// envKey is a key a variable can set, with the type its value decodes to
// (nil: kept as a string).
type envKey struct {
	key string
	typ reflect.Type
	def any // Centrifugo's default, which types a key Herald does not have (typ nil)
}

// applyCentrifugoEnv sets the keys of tree that CENTRIFUGO_ variables name,
// and returns which variable set which key.
//
// A variable Centrifugo does not read either is returned in unknown:
// Centrifugo warns about it ("unknown var in environment") and starts.
func applyCentrifugoEnv(tree map[string]any, environ []string) (set map[string]string, ps Problems, unknown Problems) {
	vars := centrifugoVars(environ)
	set = map[string]string{}
	if len(vars) == 0 {
		return set, nil, nil
	}
	bad := func(name, format string, args ...any) {
		ps = append(ps, Problem{Key: name, Message: fmt.Sprintf(format, args...)})
	}
	// Whole lists first, so that a variable for one item applies to them.
	for _, l := range centrifugoLists {
		name := centrifugoEnvName(l.key)
		val, ok := vars[name]
		if !ok {
			continue
		}
		delete(vars, name)
		items, err := envList(val, lookupKey(tree, l.key))
		if err != nil {
			bad(name, "%v", err)
			continue
		}
		if items != nil {
			setKey(tree, l.key, items)
			set[l.key] = name
		}
	}
	tb := newCFTables()
	keys := tb.envKeys("", configType, "")
	for _, name := range sortedKeys(vars) {
		k, ok := keys[name]
		if !ok {
			continue
		}
		val := vars[name]
		delete(vars, name)
		if val == "" {
			continue
		}
		v, err := k.value(val)
		if err != nil {
			bad(name, "(for %s) %v", k.key, err)
			continue
		}
		setKey(tree, k.key, v)
		set[k.key] = name
	}
	// Every item whose variable name matches takes the variable, as each
	// of Centrifugo's items reads its own prefix: so a variable is used up
	// only after all items had it.
	used := map[string]bool{}
	for _, l := range centrifugoLists {
		list, _ := lookupKey(tree, l.key).([]any)
		itemType := keyType(configType, l.key)
		if itemType != nil {
			itemType = itemType.Elem()
		}
		itemKeys := tb.envKeys("", itemType, l.rule)
		for i, e := range list {
			item, ok := e.(map[string]any)
			if !ok || item["name"] == nil {
				continue
			}
			prefix := centrifugoEnvName(l.key+"."+fmt.Sprint(item["name"])) + "_"
			for _, name := range sortedKeys(vars) {
				opt, ok := strings.CutPrefix(name, prefix)
				if !ok {
					continue
				}
				k, ok := itemKeys[CentrifugoEnvPrefix+opt]
				if !ok {
					continue
				}
				used[name] = true
				if vars[name] == "" {
					continue
				}
				v, err := k.value(vars[name])
				if err != nil {
					bad(name, "(for %s) %v", k.key, err)
					continue
				}
				setKey(item, k.key, v)
				set[fmt.Sprintf("%s[%d].%s", l.key, i, k.key)] = name
			}
		}
	}
	for name := range used {
		delete(vars, name)
	}
	// A variable below a section Herald does not have (CENTRIFUGO_GRAPHITE_ENABLED)
	// is refused with the section's note.
	envDefaults := centrifugoEnvDefaults()
	for _, name := range sortedKeys(vars) {
		if _, known := envDefaults[name]; known {
			continue // Centrifugo's variable with no key of the file: below
		}
		for _, n := range tb.rows {
			if n.writes() || strings.Contains(n.Key, "[]") {
				continue
			}
			if rest, ok := strings.CutPrefix(name, centrifugoEnvName(n.Key)+"_"); ok {
				if vars[name] == "" {
					delete(vars, name)
					break
				}
				if _, isMap := lookupKey(tree, n.Key).(map[string]any); isMap || lookupKey(tree, n.Key) == nil {
					ensureMapPath(tree, n.Key)[strings.ToLower(rest)] = vars[name]
					set[n.Key+"."+strings.ToLower(rest)] = name
					delete(vars, name)
					break
				}
			}
		}
	}
	for _, name := range sortedKeys(vars) {
		if centrifugoPassesOver(name) {
			continue
		}
		if def, known := envDefaults[name]; known {
			// A variable only Centrifugo's environment has (no file key,
			// such as the redisnats broker's): its default changes nothing.
			if vars[name] != "" && vars[name] != def {
				bad(name, "Herald has no such option: only Centrifugo's default (%q) is taken; remove it", def)
			}
			continue
		}
		unknown = append(unknown, Problem{Key: name, Message: "unknown variable: names no option of Centrifugo " + CentrifugoVersion + "; it is not used"})
	}
	return set, ps, unknown
}

// value decodes a variable's value for the key.
func (k envKey) value(s string) (any, error) {
	if k.typ == nil && k.def != nil {
		return envValueLike(s, k.def)
	}
	return envValue(s, k.typ)
}

// envValueLike decodes a variable for a key Herald does not have, by the
// type of Centrifugo's default for it, so that it compares with it.
func envValueLike(s string, def any) (any, error) {
	switch def.(type) {
	case bool:
		return envValue(s, reflect.TypeOf(false))
	case int64:
		return envValue(s, reflect.TypeOf(int64(0)))
	case float64:
		return envValue(s, reflect.TypeOf(float64(0)))
	case map[string]any:
		return envValue(s, reflect.TypeOf(map[string]any{}))
	case []any:
		if t := strings.TrimSpace(s); strings.HasPrefix(t, "[") {
			return decodeJSON(t)
		}
		return envValue(s, reflect.TypeOf([]string{}))
	}
	return s, nil
}

// envList is the list of named objects a variable gives, added to (or
// replacing) the file's list current: nil when the value is empty, which
// leaves the file's list as it is.
func envList(val string, current any) ([]any, error) {
	if val == "" {
		return nil, nil
	}
	trimmed := strings.TrimSpace(val)
	if strings.HasPrefix(trimmed, "[") || strings.HasPrefix(trimmed, "{") {
		items, err := decodeJSON(val)
		list, isList := items.([]any)
		if err != nil || !isList {
			return nil, fmt.Errorf("want a JSON array of objects, or names separated by spaces, as Centrifugo reads it (%v)", errOr(err, "not an array"))
		}
		return list, nil
	}
	// Centrifugo splits at each space; runs of spaces (or tabs) would give
	// it an empty name, which its validation refuses: here they separate.
	old, _ := current.([]any)
	list := append([]any{}, old...)
	for _, n := range strings.Fields(val) {
		list = append(list, map[string]any{"name": n})
	}
	return list, nil
}

// kubernetesVar matches the variables Kubernetes sets for a service named
// centrifugo (CENTRIFUGO_PORT, CENTRIFUGO_SERVICE_HOST, ...), the rule of
// Centrifugo's internal/config/config.go (k8sEnvRegex).
var kubernetesVar = regexp.MustCompile(`^CENTRIFUGO(?:_[A-Z0-9_]+)?_(PORT|SERVICE_)`)

// centrifugoPassesOver reports whether Centrifugo, too, would neither use
// nor warn about a variable that names no option: Kubernetes' service
// variables and CENTRIFUGO_VAR_ ones (which its files may refer to).
func centrifugoPassesOver(name string) bool {
	return kubernetesVar.MatchString(name) || strings.HasPrefix(name, CentrifugoEnvPrefix+"VAR_")
}

// envKeys lists the keys variables can set below rule: Herald's
// keys of type t (which map by name) and the keys of the key table, by
// variable name (without the item part for list items).
func (tb *cfTables) envKeys(prefix string, t reflect.Type, rule string) map[string]envKey {
	keys := map[string]envKey{}
	addKey := func(key string, k envKey) {
		name := centrifugoEnvName(key)
		if _, dup := keys[name]; !dup {
			k.key = key
			keys[name] = k
		}
	}
	add := func(key string, typ reflect.Type) { addKey(key, envKey{typ: typ}) }
	var heraldKeys func(t reflect.Type, prefix string)
	heraldKeys = func(t reflect.Type, prefix string) {
		if t == nil || t.Kind() != reflect.Struct {
			return
		}
		for _, o := range options(t) {
			key := join(prefix, o.key)
			if isSection(o.typ) {
				heraldKeys(o.typ, key)
				continue
			}
			add(key, o.typ)
		}
	}
	heraldKeys(t, prefix)
	// Centrifugo's keys that Herald does not have, typed by their defaults.
	leaf := func(key string, v any) {
		if key != "" {
			addKey(key, envKey{def: v})
		}
	}
	// The keys of the table below rule, relative to it; list items' keys
	// are set through their own variables.
	for _, r := range tb.rows {
		rel := r.Key
		if rule != "" {
			var ok bool
			if rel, ok = strings.CutPrefix(r.Key, rule+"."); !ok {
				continue
			}
		}
		if strings.Contains(rel, "[]") {
			continue
		}
		if r.writes() {
			add(rel, heraldKeyType(r.Herald))
			continue
		}
		d, _ := tb.defaultOf(r.Key) // types the value, to compare with it
		addKey(rel, envKey{def: d})
	}
	if rule == "" {
		proxyKeys := tb.envKeys("", proxyItemType(), "proxies[]")
		// The objects whose keys a converter reads one by one (Centrifugo's
		// unnamed proxies, its TLS objects) have a variable for each key.
		for _, r := range tb.rows {
			if strings.Contains(r.Key, "[]") {
				continue
			}
			switch {
			case r.convertedBy(clientProxy, defaultProxy):
				add(r.Key+".enabled", reflect.TypeOf(false))
				for _, k := range proxyKeys {
					addKey(r.Key+"."+k.key, k)
				}
			case r.convertedBy(listenerTLS, clientTLS):
				for _, k := range []string{"enabled", "insecure_skip_verify"} {
					add(r.Key+"."+k, reflect.TypeOf(false))
				}
				for _, k := range []string{"cert_pem", "key_pem", "client_ca_pem", "server_ca_pem", "server_name"} {
					add(r.Key+"."+k, nil)
				}
			}
		}
		for _, o := range options(keyType(configType, "tls_autocert")) {
			add("http_server.tls_autocert."+o.key, o.typ)
		}
		nsType := keyType(configType, "channel.without_namespace")
		for _, k := range tb.envKeys("", nsType, "channel.namespaces[]") {
			addKey("channel.without_namespace."+k.key, k)
		}
		for _, k := range tb.envKeys("", nil, "rpc.namespaces[]") {
			addKey("rpc.without_namespace."+k.key, k)
		}
	}
	// Last, so that Herald's keys and the table's come first.
	if rule == "" {
		eachLeaf(tb.defaults, "", leaf)
	} else if d, ok := tb.defaultOf(rule); ok {
		eachLeaf(d, "", leaf)
	}
	return keys
}

// envValue decodes a variable's value as Centrifugo does for a key of
// type typ: booleans by strconv.ParseBool, lists of strings separated by
// spaces, mappings and lists of objects as JSON.
func envValue(s string, typ reflect.Type) (any, error) {
	if typ == durationType {
		// Centrifugo reads it with time.ParseDuration: a unit is required.
		if _, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && strings.TrimSpace(s) != "0" {
			return nil, fmt.Errorf("%q: want a duration with a unit, such as \"%ss\"", s, s)
		}
		return s, nil
	}
	if typ == nil {
		return s, nil
	}
	switch typ.Kind() {
	case reflect.String:
		return s, nil
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, fmt.Errorf("%q: want true or false", s)
		}
		return b, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			return nil, fmt.Errorf("%q: want a whole number", s)
		}
		return n, nil
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%q: want a number", s)
		}
		return f, nil
	case reflect.Slice:
		if typ.Elem().Kind() == reflect.String {
			items := []any{}
			for _, f := range strings.Fields(s) {
				items = append(items, f)
			}
			return items, nil
		}
	}
	v, err := decodeJSON(s)
	if err != nil {
		return nil, fmt.Errorf("want JSON: %v", err)
	}
	return v, nil
}

func decodeJSON(s string) (any, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return normalize(v), nil
}

func errOr(err error, msg string) string {
	if err != nil {
		return err.Error()
	}
	return msg
}

// lookupKey returns the value at a dotted key of tree, or nil.
func lookupKey(tree map[string]any, key string) any {
	var v any = tree
	for _, p := range strings.Split(key, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// heraldKeyType is the type of a Herald key as the key table writes it,
// "[]" for any item of a list, or nil.
func heraldKeyType(key string) reflect.Type {
	list, rest, ok := strings.Cut(key, "[].")
	if !ok {
		return keyType(configType, key)
	}
	t := keyType(configType, list)
	if t == nil || t.Kind() != reflect.Slice {
		return nil
	}
	return keyType(t.Elem(), rest)
}
