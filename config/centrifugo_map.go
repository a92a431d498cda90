package config

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// configType is the type the Herald file decodes into.
var configType = reflect.TypeOf(Config{})

// How a Centrifugo key becomes Herald's, in this order:
//
//  1. a row of the key table (centrifugo_keys.go) that renames or converts
//     it (client.allowed_origins -> websocket.allowed_origins, or
//     http_server.port + address -> address);
//  2. a Herald key of the same name at the same place: the value is copied.
//     Options added to Herald under Centrifugo's names therefore work with
//     Centrifugo files as soon as they exist, without a row;
//  3. a row that drops the key (any value is taken: Herald needs no
//     setting for it), tunes (any value is taken; one other than
//     Centrifugo's default is named as not needed) or refuses it (values
//     that change nothing in Herald are taken, Centrifugo's default or
//     prometheus.enabled: false; any other is refused with the row's note,
//     which says what to do);
//  4. a key of Centrifugo's defaults (centrifugo_defaults.go) that no row
//     names: taken at its default, refused otherwise;
//  5. anything else is a key Centrifugo does not have either: a warning,
//     as Centrifugo warns, refused when strict.
//
// Keys are written with "[]" for any item of a list:
// channel.namespaces[].subscribe_proxy_enabled.

// cfCtx is where the walk is: the key, the Centrifugo mapping holding it
// and the Herald mapping it fills.
type cfCtx struct {
	src      map[string]any // the Centrifugo mapping the key is in
	key      string
	path     string         // the key as the file has it: channel.namespaces[2].presence
	rule     string         // the key as the table has it: channel.namespaces[].presence
	row      centrifugoKey  // the table's row for rule, when there is one
	dst      map[string]any // the Herald mapping that corresponds to src (nil: none)
	item     map[string]any // the Herald list item being filled (a namespace, a proxy), or nil
	itemType reflect.Type   // its type
}

// cfMapper translates one Centrifugo tree into a Herald one.
type cfMapper struct {
	tables  *cfTables
	out     map[string]any
	ps      Problems
	proxies []any // proxies made from Centrifugo's unnamed ones (client.proxy.connect, ...)
	defined map[string]bool
	needed  map[string]string // a generated proxy's name -> the key that needs it
	unknown Problems          // keys Centrifugo does not have: warned about, refused only when strict
	// notNeeded are the keys, set to other than Centrifugo's default,
	// that tune something Herald does without a setting.
	notNeeded []string
	after     []func() // conversions that need the whole file read first
}

// mapCentrifugo translates a Centrifugo tree into a Herald tree, or says
// which keys it cannot take and why.
func mapCentrifugo(tree map[string]any) (map[string]any, Problems) {
	out, ps, _ := mapCentrifugoReport(tree)
	return out, ps
}

// mapCentrifugoReport is mapCentrifugo with what it found beside the
// problems: unknown keys and keys Herald does not need.
func mapCentrifugoReport(tree map[string]any) (map[string]any, Problems, CentrifugoReport) {
	m := &cfMapper{
		tables: newCFTables(),
		out: map[string]any{
			// Centrifugo's defaults where they differ from Herald's: the
			// HTTP-streaming and SSE transports are off unless enabled.
			"http_stream": map[string]any{"enabled": false},
			"sse":         map[string]any{"enabled": false},
		},
		defined: map[string]bool{},
		needed:  map[string]string{},
	}
	m.walk(tree, "", "", m.out, configType, nil, nil)
	for _, f := range m.after {
		f()
	}
	if len(m.proxies) > 0 {
		list, _ := m.out["proxies"].([]any)
		m.out["proxies"] = append(list, m.proxies...)
	}
	for _, name := range sortedKeys(m.needed) {
		if !m.defined[name] {
			m.refuse(m.needed[name], fmt.Sprintf("refers to the proxy of %s, which is not configured: set its endpoint or name a proxy of 'proxies'", name))
		}
	}
	slices.SortStableFunc(m.ps, func(a, b Problem) int { return strings.Compare(a.Key, b.Key) })
	return m.out, m.ps, CentrifugoReport{Unknown: m.unknown, NotNeeded: m.notNeeded}
}

func (m *cfMapper) refuse(path, msg string) {
	m.ps = append(m.ps, Problem{Key: path, Message: msg})
}

// walk maps the keys of src into dst, the Herald mapping of type t (nil
// when Herald has no such section).
func (m *cfMapper) walk(src map[string]any, path, rule string, dst map[string]any, t reflect.Type, item map[string]any, itemType reflect.Type) {
	for _, k := range sortedKeys(src) {
		v := src[k]
		c := cfCtx{src: src, key: k, path: join(path, k), rule: join(rule, k), dst: dst, item: item, itemType: itemType}
		row, hasRow := m.tables.byKey[c.rule]
		c.row = row
		if hasRow && row.writes() {
			row.apply(m, c, v)
			continue
		}
		if t != nil && dst != nil {
			if o, ok := optionByKey(t, k); ok {
				m.copyValue(c, v, o.typ)
				continue
			}
		}
		if hasRow {
			switch {
			case row.Action == cfTune:
				if !m.tables.isDefault(c.rule, v) {
					m.notNeeded = append(m.notNeeded, c.path)
				}
			case row.takes(v) || m.tables.isDefault(c.rule, v):
			default:
				m.refuse(c.path, row.Note)
			}
			continue
		}
		if vm, ok := v.(map[string]any); ok && m.tables.hasRuleUnder(c.rule) {
			m.walk(vm, c.path, c.rule, nil, nil, item, itemType)
			continue
		}
		if d, known := m.tables.defaultOf(c.rule); known {
			// A key of Centrifugo's that Herald has no use for and no
			// row names: taken at Centrifugo's default (or off), refused
			// otherwise, since its meaning would be lost.
			_, dMap := d.(map[string]any)
			if vm, ok := v.(map[string]any); ok && dMap {
				m.walk(vm, c.path, c.rule, nil, nil, item, itemType)
				continue
			}
			if !isOff(v) && !m.tables.isDefault(c.rule, v) {
				m.refuse(c.path, fmt.Sprintf("Herald has no such option: only Centrifugo's default (%s) is taken; remove it", defaultText(d)))
			}
			continue
		}
		suggest := ""
		if s := m.nearestKey(k, c.rule, t); s != "" {
			suggest = fmt.Sprintf(" (did you mean %q?)", join(path, s))
		}
		if !m.tables.knowsItemKeys(c.rule) {
			// Centrifugo's defaults have no item of this list (consumers):
			// whether Centrifugo has the key cannot be told, so it is
			// refused rather than passed over.
			m.refuse(c.path, "not a Centrifugo v6 option that Herald knows"+suggest)
			continue
		}
		// Centrifugo warns about a key it does not know and starts
		// (internal/app/log.go, "unknown key in configuration file"); so
		// does Herald, with the key it is likely a misspelling of. Strict
		// checking refuses it (Strict).
		msg := "unknown key: not an option of Centrifugo " + CentrifugoVersion + "; it is not used" + suggest
		m.unknown = append(m.unknown, Problem{Key: c.path, Message: msg})
	}
}

// defaultText writes a default value for a message.
func defaultText(d any) string {
	if s, ok := d.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	if isEmpty(d) {
		return "empty"
	}
	return fmt.Sprint(d)
}

// nearestKey is the known key next to key (in Herald's section t or the
// tables under rule's parent) that key is likely a misspelling of.
func (m *cfMapper) nearestKey(key, rule string, t reflect.Type) string {
	var known []option
	if t != nil {
		known = options(t)
	}
	parent := strings.TrimSuffix(rule, key)
	add := func(k string) {
		if rest, ok := strings.CutPrefix(k, parent); ok && rest != "" {
			rest, _, _ = strings.Cut(rest, ".")
			known = append(known, option{key: strings.TrimSuffix(rest, "[]")})
		}
	}
	for _, r := range m.tables.rows {
		add(r.Key)
	}
	for _, k := range m.tables.centrifugoKeysUnder(strings.TrimSuffix(parent, ".")) {
		known = append(known, option{key: k})
	}
	return nearest(key, known)
}

// copyValue puts a value under the same key in Herald's file, walking into
// sections and lists of sections so that their keys are mapped one by one.
func (m *cfMapper) copyValue(c cfCtx, v any, typ reflect.Type) {
	switch {
	case typ == durationType:
		if msg := centrifugoDuration(v); msg != "" {
			m.refuse(c.path, msg)
			return
		}
	case isLeafType(typ):
		v = weakValue(v, typ)
	case isSection(typ):
		if vm, ok := v.(map[string]any); ok {
			m.walk(vm, c.path, c.rule, ensureMap(c.dst, c.key), typ, c.item, c.itemType)
			return
		}
	case typ.Kind() == reflect.Slice && isSection(typ.Elem()):
		if list, ok := v.([]any); ok {
			out := make([]any, 0, len(list))
			for i, e := range list {
				em, ok := e.(map[string]any)
				if !ok {
					out = append(out, e) // Herald's decoding names the item
					continue
				}
				d := map[string]any{}
				m.walk(em, fmt.Sprintf("%s[%d]", c.path, i), c.rule+"[]", d, typ.Elem(), d, typ.Elem())
				out = append(out, d)
			}
			c.dst[c.key] = out
			return
		}
	}
	c.dst[c.key] = v
}

// setKey writes a value at a dotted Herald key below root.
func setKey(root map[string]any, key string, v any) {
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		root = ensureMap(root, p)
	}
	root[parts[len(parts)-1]] = v
}

func ensureMap(m map[string]any, key string) map[string]any {
	if sub, ok := m[key].(map[string]any); ok {
		return sub
	}
	sub := map[string]any{}
	m[key] = sub
	return sub
}

// keyType is the type of a dotted key below the struct type t, or nil when
// t has no such key.
func keyType(t reflect.Type, key string) reflect.Type {
	for _, part := range strings.Split(key, ".") {
		if t == nil || t.Kind() != reflect.Struct {
			return nil
		}
		o, ok := optionByKey(t, part)
		if !ok {
			return nil
		}
		t = o.typ
	}
	return t
}

// centrifugoOnlyKey returns the first key (in sorted order) of tree that
// is Centrifugo's and not Herald's, or that has Centrifugo's shape where
// both have it (client.proxy.connect as an object), or "".
func (tb *cfTables) centrifugoOnlyKey(tree map[string]any, path, rule string, t reflect.Type) string {
	for _, k := range sortedKeys(tree) {
		v := tree[k]
		p, r := join(path, k), join(rule, k)
		var o option
		herald := false
		if t != nil {
			o, herald = optionByKey(t, k)
		}
		row, isRow := tb.byKey[r]
		isRule := isRow && row.writes()
		if !herald {
			if isRow || tb.hasRuleUnder(r) {
				return p
			}
			continue
		}
		switch vv := v.(type) {
		case map[string]any:
			if !isSection(o.typ) {
				if isRule {
					return p
				}
				continue
			}
			sub := r
			if r == "channel.without_namespace" {
				sub = "channel.namespaces[]" // the namespace options' rules
			}
			if found := tb.centrifugoOnlyKey(vv, p, sub, o.typ); found != "" {
				return found
			}
		case []any:
			if o.typ.Kind() == reflect.Slice && isSection(o.typ.Elem()) {
				for i, e := range vv {
					if em, ok := e.(map[string]any); ok {
						if found := tb.centrifugoOnlyKey(em, fmt.Sprintf("%s[%d]", p, i), r+"[]", o.typ.Elem()); found != "" {
							return found
						}
					}
				}
			}
		}
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// centrifugoDuration checks a duration the way Centrifugo reads it: a
// string with a unit ("300s", "1h"). Herald reads a bare number as seconds
// and Centrifugo as nanoseconds, so a number is refused rather than given
// either meaning.
func centrifugoDuration(v any) string {
	switch x := v.(type) {
	case int64, float64:
		return fmt.Sprintf("%v: write the duration with a unit, such as \"%vs\" (Centrifugo reads a bare number as nanoseconds, Herald as seconds)", v, v)
	case string:
		// Centrifugo reads a string with time.ParseDuration, which wants
		// a unit ("25" is an error there); Herald would take it as seconds.
		if _, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil && strings.TrimSpace(x) != "0" {
			return fmt.Sprintf("%q: write the duration with a unit, such as \"%ss\", as Centrifugo requires", x, strings.TrimSpace(x))
		}
	}
	return ""
}

// weakValue reads a string where a number or a boolean is wanted as
// Centrifugo does: its configuration is decoded by mapstructure with
// viper's WeaklyTypedInput, so "25" is 25 and "true" is true. Other
// values are returned as they are, for Herald's decoding to check.
func weakValue(v any, typ reflect.Type) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	switch k := typ.Kind(); {
	case k == reflect.Bool:
		if b, err := strconv.ParseBool(s); err == nil {
			return b
		}
	case k >= reflect.Int && k <= reflect.Uint64:
		if n, err := strconv.ParseInt(strings.TrimSpace(s), 0, 64); err == nil {
			return n
		}
	case k == reflect.Float32 || k == reflect.Float64:
		if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
			return f
		}
	}
	return v
}

// cfTables is the key table indexed by key.
type cfTables struct {
	rows     []centrifugoKey
	byKey    map[string]centrifugoKey
	defaults map[string]any // Centrifugo's defaults (centrifugo_defaults.go)
}

func newCFTables() *cfTables {
	t := &cfTables{rows: centrifugoKeys(), byKey: map[string]centrifugoKey{}, defaults: centrifugoDefaults()}
	for _, r := range t.rows {
		t.byKey[r.Key] = r
	}
	return t
}

// hasRuleUnder reports whether the table has a key below rule, so that a
// section Herald does not have is walked for them.
func (t *cfTables) hasRuleUnder(rule string) bool {
	for _, r := range t.rows {
		if strings.HasPrefix(r.Key, rule+".") {
			return true
		}
	}
	return false
}

// writes reports whether the row writes a Herald key (a rename or a
// conversion), which it does before a Herald key of the same name is
// looked for.
func (r centrifugoKey) writes() bool { return r.Action == cfRename || r.Action == cfConvert }

// apply writes the value of a renamed or converted key.
func (r centrifugoKey) apply(m *cfMapper, c cfCtx, v any) {
	if r.Action == cfRename {
		rename(m, c, v)
		return
	}
	r.Convert(m, c, v)
}

// convertedBy reports whether the row's converter is one of fns.
func (r centrifugoKey) convertedBy(fns ...cfConverter) bool {
	if r.Convert == nil {
		return false
	}
	p := reflect.ValueOf(r.Convert).Pointer()
	for _, f := range fns {
		if reflect.ValueOf(f).Pointer() == p {
			return true
		}
	}
	return false
}

// takes reports whether v, the value of a dropped or refused key, changes
// nothing in Herald.
func (r centrifugoKey) takes(v any) bool {
	if r.Action == cfDrop || isOff(v) {
		return true
	}
	s := fmt.Sprint(v)
	for _, w := range r.Takes {
		if s == w {
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
