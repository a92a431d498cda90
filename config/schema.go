package config

import (
	"reflect"
	"strings"
	"time"
)

// The definition of every option is a field of Config, or of a type it
// holds, with its key, default and documentation as struct tags:
//
//	HistorySize int `yaml:"history_size" default:"0" doc:"how many ..."`
//
//   - yaml: the key (",inline" merges a struct's keys into its parent's);
//   - default: the value a file starts from, written as in YAML; without
//     it the zero value;
//   - doc: one line for the reference tables and the example file; code is
//     written 'between single quotes' (a struct tag cannot hold a backtick);
//   - defaultdoc: what the reference tables show as the default when the
//     value alone would mislead ("twice 'ip_rate_limit'");
//   - example: for a list, a YAML flow value that the example file shows
//     instead of the empty default.
//
// Decoding, defaults, the HERALD_ environment, the example file and the
// reference tables are all read from these tags (doc.go says how to add
// an option).

// option is one key of a struct type, with inline fields flattened.
type option struct {
	key        string
	goName     string // the field's name, as the Go code and the hub's errors say it
	index      []int  // for reflect.Value.FieldByIndex
	typ        reflect.Type
	def        string
	hasDefault bool
	doc        string
	defaultDoc string
	example    string
}

var durationType = reflect.TypeOf(time.Duration(0))

// options lists the keys of the struct type t in field order. As with Go's
// promoted fields, a key of t's own shadows the same key of a type it
// embeds inline (config.ChannelConfig replaces the hub's namespace lists
// with its own, which add the proxies and SQL checks).
func options(t reflect.Type) []option {
	own := map[string]int{}
	for i := 0; i < t.NumField(); i++ {
		name, flags, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" && !strings.Contains(flags, "inline") {
			own[name] = i
		}
	}
	var out []option
	placed := map[int]bool{} // own fields listed where the key they shadow was
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, flags, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || !f.IsExported() || placed[i] {
			continue
		}
		if strings.Contains(flags, "inline") {
			for _, o := range options(f.Type) {
				if j, ok := own[o.key]; ok {
					// In the shadowed key's place, so that replacing a
					// section keeps the order of the keys (and of the
					// reference tables).
					if !placed[j] {
						placed[j] = true
						out = append(out, ownOption(t.Field(j), j, o.key))
					}
					continue
				}
				o.index = append([]int{i}, o.index...)
				out = append(out, o)
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out = append(out, ownOption(f, i, name))
	}
	return out
}

// ownOption is the option of field f, the i-th of its struct, keyed name.
func ownOption(f reflect.StructField, i int, name string) option {
	def, hasDefault := f.Tag.Lookup("default")
	return option{
		key: name, goName: f.Name, index: []int{i}, typ: f.Type,
		def: def, hasDefault: hasDefault, doc: f.Tag.Get("doc"),
		defaultDoc: f.Tag.Get("defaultdoc"), example: f.Tag.Get("example"),
	}
}

// optionByKey finds the key of the struct type t.
func optionByKey(t reflect.Type, key string) (option, bool) {
	for _, o := range options(t) {
		if o.key == key {
			return o, true
		}
	}
	return option{}, false
}

// isSection reports whether values of t are mappings of keys of their own.
func isSection(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && !isLeafType(t)
}

// isLeafType reports whether t is decoded from one scalar.
func isLeafType(t reflect.Type) bool {
	if t == durationType {
		return true
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// applyDefaults sets every option of the struct v, and of the sections it
// holds, to its default tag. A default that does not decode is a bug in
// the definition, which a test catches.
func applyDefaults(v reflect.Value) {
	for _, o := range options(v.Type()) {
		fv := v.FieldByIndex(o.index)
		switch {
		case isSection(o.typ):
			applyDefaults(fv)
			if o.hasDefault {
				if ps := decodeString(o.def, fv, o.key); len(ps) > 0 {
					panic("config: the default of " + o.key + " does not decode: " + ps.Error())
				}
			}
		case o.hasDefault:
			if ps := decodeString(o.def, fv, o.key); len(ps) > 0 {
				panic("config: the default of " + o.key + " does not decode: " + ps.Error())
			}
		}
	}
}

// goPathToKey translates a Go field path below the struct type t, as the hub's
// OptionError names it ("Namespaces[2].HistorySize"), to the key a file
// writes ("namespaces[2].history_size"). Parts it cannot resolve are kept.
func goPathToKey(t reflect.Type, goPath string) string {
	var keys []string
	for _, part := range strings.Split(goPath, ".") {
		name, idx, _ := strings.Cut(part, "[")
		if idx != "" {
			idx = "[" + idx
		}
		for t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer) {
			t = t.Elem()
		}
		if t == nil || t.Kind() != reflect.Struct {
			keys = append(keys, part)
			t = nil
			continue
		}
		o, ok := optionByGoName(t, name)
		if !ok {
			keys = append(keys, part)
			t = nil
			continue
		}
		keys = append(keys, o.key+idx)
		t = o.typ
	}
	return strings.Join(keys, ".")
}

// optionByGoName finds the option of the struct type t whose field is
// called name, inline fields included.
func optionByGoName(t reflect.Type, name string) (option, bool) {
	for _, o := range options(t) {
		if o.goName == name {
			return o, true
		}
	}
	return option{}, false
}

// goNamesToKeys rewrites the Go field names of the struct type t that a
// message mentions ("HistorySize and HistoryTTL must be set together")
// into their keys.
func goNamesToKeys(t reflect.Type, message string) string {
	for t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer) {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return message
	}
	words := strings.FieldsFunc(message, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_')
	})
	seen := map[string]bool{}
	var pairs []string
	for _, w := range words {
		if seen[w] || w == "" || w[0] < 'A' || w[0] > 'Z' {
			continue
		}
		seen[w] = true
		if o, ok := optionByGoName(t, w); ok {
			pairs = append(pairs, w, o.key)
		}
	}
	if len(pairs) == 0 {
		return message
	}
	return replaceWords(message, pairs)
}

// replaceWords replaces whole words only, so that "HistoryTTL" is not
// touched by the rule for "History".
func replaceWords(s string, pairs []string) string {
	repl := make(map[string]string, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		repl[pairs[i]] = pairs[i+1]
	}
	var b strings.Builder
	isWord := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
	}
	for i := 0; i < len(s); {
		if !isWord(s[i]) {
			b.WriteByte(s[i])
			i++
			continue
		}
		j := i
		for j < len(s) && isWord(s[j]) {
			j++
		}
		if r, ok := repl[s[i:j]]; ok {
			b.WriteString(r)
		} else {
			b.WriteString(s[i:j])
		}
		i = j
	}
	return b.String()
}
