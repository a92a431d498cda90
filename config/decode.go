package config

import (
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

// decodeNode decodes a parsed YAML document into v, walking the two
// alongside: it reports unknown keys (with the nearest known key) and
// values of the wrong type, each with its full key path, and decodes
// what it can. New list items start from their defaults. A null leaves
// the value (and so its default) as it was.
func decodeNode(n *yaml.Node, v reflect.Value, path string) Problems {
	t := v.Type()
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return decodeNode(n.Content[0], v, path)
	case yaml.AliasNode:
		return decodeNode(n.Alias, v, path)
	}
	null := n.Kind == yaml.ScalarNode && n.Tag == "!!null"
	switch {
	case t == durationType:
		if null {
			return nil
		}
		if n.Kind != yaml.ScalarNode {
			return Problems{{Key: path, Line: n.Line, Message: `invalid duration: want a string like "25s" or a number of seconds`}}
		}
		d, err := parseDuration(n.Value)
		if err != nil {
			return Problems{{Key: path, Line: n.Line, Message: err.Error()}}
		}
		v.SetInt(int64(d))
		return nil
	case isLeafType(t):
		if null {
			return nil
		}
		// yaml.v3 truncates a fraction into an integer (1.9 becomes 1).
		if k := t.Kind(); k >= reflect.Int && k <= reflect.Uint64 && n.Tag == "!!float" {
			return Problems{{Key: path, Line: n.Line, Message: typeMessage(t, n)}}
		}
		ptr := reflect.New(t)
		if err := n.Decode(ptr.Interface()); err != nil {
			return Problems{{Key: path, Line: n.Line, Message: typeMessage(t, n)}}
		}
		v.Set(ptr.Elem())
		return nil
	case t.Kind() == reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return Problems{{Key: path, Line: n.Line, Message: "want a mapping of keys"}}
		}
		var ps Problems
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			key := join(path, k.Value)
			// A key given twice is refused, not taken last-wins: one of
			// the two values would be dropped without a word.
			if line, dup := seen[k.Value]; dup {
				ps = append(ps, Problem{Key: key, Line: k.Line, Message: fmt.Sprintf("given twice (first at line %d)", line)})
				continue
			}
			seen[k.Value] = k.Line
			o, ok := optionByKey(t, k.Value)
			if !ok {
				msg := "unknown key"
				if s := nearest(k.Value, options(t)); s != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", join(path, s))
				}
				ps = append(ps, Problem{Key: key, Line: k.Line, Message: msg})
				continue
			}
			ps = append(ps, decodeNode(val, v.FieldByIndex(o.index), key)...)
		}
		return ps
	case t == stringListType && n.Kind == yaml.ScalarNode && !null:
		var one string
		if err := n.Decode(&one); err != nil {
			return Problems{{Key: path, Line: n.Line, Message: typeMessage(reflect.TypeOf(one), n)}}
		}
		v.Set(reflect.ValueOf(StringList{one}))
		return nil
	case t.Kind() == reflect.Slice:
		if null {
			v.Set(reflect.Zero(t))
			return nil
		}
		if n.Kind != yaml.SequenceNode {
			return Problems{{Key: path, Line: n.Line, Message: "want a list"}}
		}
		var ps Problems
		items := reflect.MakeSlice(t, len(n.Content), len(n.Content))
		for i, item := range n.Content {
			if isSection(t.Elem()) {
				applyDefaults(items.Index(i))
			}
			ps = append(ps, decodeNode(item, items.Index(i), fmt.Sprintf("%s[%d]", path, i))...)
		}
		v.Set(items)
		return ps
	}
	ptr := reflect.New(t)
	if err := n.Decode(ptr.Interface()); err != nil {
		return Problems{{Key: path, Line: n.Line, Message: err.Error()}}
	}
	v.Set(ptr.Elem())
	return nil
}

// decodeString decodes one YAML value (a default, or an environment
// variable's value) into v.
func decodeString(s string, v reflect.Value, path string) Problems {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(s), &n); err != nil {
		return Problems{{Key: path, Message: fmt.Sprintf("not a valid value: %v", err)}}
	}
	return decodeNode(&n, v, path)
}

// typeMessage says what a key of type t wants, and what it got.
func typeMessage(t reflect.Type, n *yaml.Node) string {
	var want string
	switch k := t.Kind(); {
	case k == reflect.Bool:
		want = "true or false"
	case k == reflect.String:
		want = "a string"
	case k >= reflect.Int && k <= reflect.Uint64:
		want = "a whole number"
	default:
		want = "a number"
	}
	return fmt.Sprintf("want %s, got %q", want, n.Value)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// nearest returns the known key closest to key, if close enough to be a
// likely misspelling.
func nearest(key string, known []option) string {
	best, bestD := "", len(key)/2+2
	for _, o := range known {
		k := o.key
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
