package server

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Problem is one finding about a configuration file, with the key it is
// about and the line it is on.
type Problem struct {
	Key     string
	Line    int
	Message string
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("line %d: %s: %s", p.Line, p.Key, p.Message)
	}
	return fmt.Sprintf("%s: %s", p.Key, p.Message)
}

// Problems is a list of findings; as an error it reports them all.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// checkNode walks a parsed YAML document alongside the Go type it decodes
// into, and reports unknown keys (with the nearest known key) and values
// of the wrong type, each with its full key path.
func checkNode(n *yaml.Node, t reflect.Type, path string) Problems {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		return checkNode(n.Content[0], t, path)
	}
	if n.Kind == yaml.AliasNode {
		return checkNode(n.Alias, t, path)
	}
	if isLeafType(t) {
		ptr := reflect.New(t)
		if err := n.Decode(ptr.Interface()); err != nil {
			return Problems{{Key: path, Line: n.Line, Message: typeMessage(t, n, err)}}
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return Problems{{Key: path, Line: n.Line, Message: "want a mapping of keys"}}
		}
		fields := yamlFields(t)
		var ps Problems
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			key := join(path, k.Value)
			ft, ok := fields[k.Value]
			if !ok {
				msg := "unknown key"
				if s := nearest(k.Value, fields); s != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", join(path, s))
				}
				ps = append(ps, Problem{Key: key, Line: k.Line, Message: msg})
				continue
			}
			ps = append(ps, checkNode(v, ft, key)...)
		}
		return ps
	case reflect.Slice:
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			return nil
		}
		if n.Kind != yaml.SequenceNode {
			return Problems{{Key: path, Line: n.Line, Message: "want a list"}}
		}
		var ps Problems
		for i, item := range n.Content {
			ps = append(ps, checkNode(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i))...)
		}
		return ps
	}
	ptr := reflect.New(t)
	if err := n.Decode(ptr.Interface()); err != nil {
		return Problems{{Key: path, Line: n.Line, Message: err.Error()}}
	}
	return nil
}

// hasCustomDecoding reports whether t decodes itself from a scalar.
func hasCustomDecoding(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(reflect.TypeOf((*interface{ UnmarshalText([]byte) error })(nil)).Elem()) ||
		p.Implements(reflect.TypeOf((*interface{ UnmarshalYAML(func(any) error) error })(nil)).Elem())
}

// isLeafType reports whether t is decoded from one scalar.
func isLeafType(t reflect.Type) bool {
	if hasCustomDecoding(t) {
		return true
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

func typeMessage(t reflect.Type, n *yaml.Node, err error) string {
	var want string
	switch k := t.Kind(); {
	case hasCustomDecoding(t):
	case k == reflect.Bool:
		want = "true or false"
	case k == reflect.String:
		want = "a string"
	case k >= reflect.Int && k <= reflect.Uint64:
		want = "a whole number"
	case k == reflect.Float32 || k == reflect.Float64:
		want = "a number"
	}
	if want == "" {
		// Custom decoding (durations): its own message is the precise one.
		var te *yaml.TypeError
		if errors.As(err, &te) && len(te.Errors) > 0 {
			msg := te.Errors[0]
			if i := strings.Index(msg, ": "); i >= 0 && strings.HasPrefix(msg, "line ") {
				msg = msg[i+2:]
			}
			return msg
		}
		return err.Error()
	}
	return fmt.Sprintf("want %s, got %q", want, n.Value)
}

// yamlFields maps the YAML keys of a struct type to their field types,
// with inline fields merged in.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := make(map[string]reflect.Type)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if strings.Contains(opts, "inline") {
			for k, v := range yamlFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// nearest returns the known key closest to key, if close enough to be a
// likely misspelling.
func nearest(key string, known map[string]reflect.Type) string {
	best, bestD := "", len(key)/2+2
	for k := range known {
		if d := levenshtein(key, k); d < bestD || (d == bestD && k < best) {
			best, bestD = k, d
		}
		if strings.HasPrefix(k, key) || strings.HasPrefix(key, k) {
			if d := len(k) - len(key); d < 0 && -d < bestD || d >= 0 && d < bestD {
				best, bestD = k, max(d, -d)
			}
		}
	}
	return best
}

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
