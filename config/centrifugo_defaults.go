package config

import (
	"bytes"
	_ "embed" // Centrifugo's defaults
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Centrifugo's own complete default configuration, as `centrifugo
// defaultconfig` of Centrifugo 6.9.1 writes it (centrifugo-6.9.1/README.md
// says how it was made). It is the import's list of the keys Centrifugo
// has and of their default values: a key Centrifugo has is never reported
// as unknown, and a key Herald has no use for is taken at its default (a
// disabled broker section, a proxy without endpoint) without a row having
// to list every value.
//
//go:embed centrifugo-6.9.1/config.json
var centrifugoDefaultsJSON []byte

// The variables of `centrifugo defaultenv`: a few (the redisnats broker's)
// have no key in the file.
//
//go:embed centrifugo-6.9.1/env.txt
var centrifugoEnvTxt string

// CentrifugoVersion is the Centrifugo release whose keys the import knows.
const CentrifugoVersion = "6.9.1"

// centrifugoDefaults parses the embedded defaults into the import's tree
// shape (normalize).
func centrifugoDefaults() map[string]any {
	dec := json.NewDecoder(bytes.NewReader(centrifugoDefaultsJSON))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		panic(fmt.Sprintf("config: the embedded Centrifugo defaults are not JSON: %v", err))
	}
	return normalize(v).(map[string]any)
}

// centrifugoEnvDefaults maps each variable of Centrifugo's defaultenv to
// its default value, unquoted as a shell would.
func centrifugoEnvDefaults() map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(centrifugoEnvTxt, "\n") {
		name, val, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		if u, err := strconv.Unquote(val); err == nil {
			val = u
		}
		out[name] = val
	}
	return out
}

// itemDefaults says where the defaults of a list's item are: the defaults
// list no items, but each list's item has the options of a section that
// is in them.
func itemDefaults(list string) (string, bool) {
	switch list {
	case "channel.namespaces":
		return "channel.without_namespace", true
	case "rpc.namespaces":
		return "rpc.without_namespace", true
	case "proxies":
		return "channel.proxy.map_publish", true // a named proxy is a proxy with a name
	}
	return "", false
}

// knowsItemKeys reports whether the defaults say which keys the list
// items rule is in have ("channel.namespaces[].x": yes; "consumers[].x":
// no, Centrifugo's defaults have no consumer).
func (t *cfTables) knowsItemKeys(rule string) bool {
	list, _, ok := strings.Cut(rule, "[]")
	if !ok {
		return true
	}
	_, known := itemDefaults(list)
	return known
}

// defaultOf returns Centrifugo's default for the key rule ("[]" for any
// item of a list), and whether Centrifugo has the key at all.
func (t *cfTables) defaultOf(rule string) (any, bool) {
	if rule == "" {
		return nil, false
	}
	if list, rest, ok := strings.Cut(rule, "[]"); ok {
		switch {
		case rest == "":
			if section, ok := itemDefaults(list); ok {
				return t.defaultOf(section)
			}
			return nil, t.hasDefault(list)
		case rest == ".name":
			_, ok := itemDefaults(list)
			return "", ok
		}
		section, ok := itemDefaults(list)
		if !ok || strings.Contains(rest[1:], "[]") {
			return nil, false
		}
		rule = section + rest
	}
	var v any = t.defaults
	for _, p := range strings.Split(rule, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[p]; !ok {
			return nil, false
		}
	}
	return v, true
}

func (t *cfTables) hasDefault(rule string) bool {
	_, ok := t.defaultOf(rule)
	return ok
}

// isDefault reports whether v is Centrifugo's default for rule, or for a
// mapping, whether each of its keys is at its default.
func (t *cfTables) isDefault(rule string, v any) bool {
	d, ok := t.defaultOf(rule)
	if !ok {
		return false
	}
	if vm, isMap := v.(map[string]any); isMap {
		if _, dMap := d.(map[string]any); !dMap {
			return false
		}
		for k, e := range vm {
			if !t.isDefault(rule+"."+k, e) {
				return false
			}
		}
		return true
	}
	return sameValue(v, d)
}

// sameValue compares a value of a file or variable with a default the way
// Centrifugo's decoding would see them: null and an empty list or mapping
// alike, numbers by value, durations by length ("60s" and "1m0s").
func sameValue(v, d any) bool {
	if isEmpty(v) && isEmpty(d) {
		return true
	}
	switch x := v.(type) {
	case int64:
		switch y := d.(type) {
		case int64:
			return x == y
		case float64:
			return float64(x) == y
		}
	case float64:
		switch y := d.(type) {
		case int64:
			return x == float64(y)
		case float64:
			return x == y
		}
	case string:
		y, ok := d.(string)
		if !ok {
			return false
		}
		if x == y {
			return true
		}
		dx, ex := time.ParseDuration(x)
		dy, ey := time.ParseDuration(y)
		return ex == nil && ey == nil && dx == dy
	case bool:
		y, ok := d.(bool)
		return ok && x == y
	case []any:
		y, ok := d.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// isEmpty reports whether v is null or an empty list or mapping.
func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// centrifugoKeysUnder lists the keys Centrifugo's defaults have directly
// below rule, for suggestions.
func (t *cfTables) centrifugoKeysUnder(rule string) []string {
	var d any = t.defaults
	if rule != "" {
		d, _ = t.defaultOf(rule)
	}
	m, _ := d.(map[string]any)
	return sortedKeys(m)
}

// eachLeaf calls f with each key below v that holds no mapping of keys
// (key is v's own key, "" at the top), in key order.
func eachLeaf(v any, key string, f func(key string, v any)) {
	if m, ok := v.(map[string]any); ok && len(m) > 0 {
		for _, k := range sortedKeys(m) {
			eachLeaf(m[k], join(key, k), f)
		}
		return
	}
	f(key, v)
}
