package config

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// exampleHeader opens the example file.
const exampleHeader = `# Herald configuration (YAML). Every key is optional; shown here with its default.
# Any key can be overridden by an environment variable: HERALD_ + the key path in
# capitals with '_' for '.', e.g. HERALD_CLIENT_TOKEN_HMAC_SECRET_KEY.
# Durations are Go duration strings ("300ms", "25s", "1h30m"); a bare number means seconds.
# With no client.token key and no http_api.key, "herald serve" generates random ones
# at each start and prints them; "herald config init" writes this file with fresh keys.
`

// exampleWidth is where the example's comments wrap.
const exampleWidth = 100

// Example is the commented configuration `herald config example` prints
// and `herald config init` writes: every key with its doc and its default,
// generated from the option definitions, so it cannot drift from them.
func Example() string {
	var b strings.Builder
	b.WriteString(exampleHeader)
	cfg := Default()
	writeExample(&b, reflect.ValueOf(cfg), 0)
	return b.String()
}

func writeExample(b *strings.Builder, v reflect.Value, indent int) {
	pad := strings.Repeat(" ", indent)
	for _, o := range options(v.Type()) {
		fv := v.FieldByIndex(o.index)
		if indent == 0 {
			b.WriteString("\n")
		}
		if o.doc != "" {
			for _, line := range wrap(plainDoc(o.doc), exampleWidth-indent-2) {
				b.WriteString(pad + "# " + line + "\n")
			}
		}
		switch {
		case isSection(o.typ):
			b.WriteString(pad + o.key + ":\n")
			writeExample(b, fv, indent+2)
		case o.example != "":
			b.WriteString(pad + o.key + ":\n")
			for _, l := range blockYAML(o.example) {
				b.WriteString(pad + "  " + l + "\n")
			}
		case o.typ.Kind() == reflect.Slice && isSection(o.typ.Elem()):
			// Empty by default: one item, commented out, shows its keys.
			b.WriteString(pad + o.key + ": []\n")
			item := reflect.New(o.typ.Elem()).Elem()
			applyDefaults(item)
			var ib strings.Builder
			writeExample(&ib, item, 4)
			first := true
			for _, l := range strings.Split(strings.TrimRight(ib.String(), "\n"), "\n") {
				if first && !strings.HasPrefix(strings.TrimSpace(l), "#") {
					l, first = "  - "+l[4:], false
				}
				b.WriteString(pad + "#" + l + "\n")
			}
		default:
			b.WriteString(pad + o.key + ": " + valueText(o, fv) + "\n")
		}
	}
}

// blockYAML writes a YAML value (an example tag, in flow style) in block
// style, one line per key. A malformed example is a bug in the definition,
// which the example's test catches.
func blockYAML(flow string) []string {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(flow), &n); err != nil {
		panic(fmt.Sprintf("config: example %q: %v", flow, err))
	}
	var block func(*yaml.Node)
	block = func(n *yaml.Node) {
		n.Style &^= yaml.FlowStyle
		for _, c := range n.Content {
			block(c)
		}
	}
	block(&n)
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		panic(fmt.Sprintf("config: example %q: %v", flow, err))
	}
	return strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
}

// valueText is the option's value as its default tag writes it ("60s"
// rather than "1m0s") when that is the value, else as yamlValue writes it.
func valueText(o option, v reflect.Value) string {
	if o.hasDefault && !isSection(o.typ) {
		def := reflect.New(o.typ).Elem()
		if ps := decodeString(o.def, def, o.key); len(ps) == 0 && reflect.DeepEqual(def.Interface(), v.Interface()) {
			if v.Kind() == reflect.String {
				return yamlString(v.String())
			}
			return o.def
		}
	}
	return yamlValue(v)
}

// yamlValue writes v as a one-line YAML value.
func yamlValue(v reflect.Value) string {
	if v.Type() == durationType {
		return formatDuration(time.Duration(v.Int()))
	}
	switch v.Kind() {
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case reflect.String:
		return yamlString(v.String())
	case reflect.Slice:
		items := make([]string, v.Len())
		for i := range items {
			items[i] = yamlValue(v.Index(i))
		}
		return "[" + strings.Join(items, ", ") + "]"
	case reflect.Map:
		var items []string
		iter := v.MapRange()
		for iter.Next() {
			items = append(items, yamlValue(iter.Key())+": "+yamlValue(iter.Value()))
		}
		return "{" + strings.Join(items, ", ") + "}"
	}
	return fmt.Sprint(v.Interface())
}

// yamlString quotes s when YAML would read it as something else.
func yamlString(s string) string {
	if s == "" {
		return `""`
	}
	out, err := yaml.Marshal(s)
	if err != nil {
		return strconv.Quote(s)
	}
	q := strings.TrimSuffix(string(out), "\n")
	// Quoted also when YAML would not need it but a reader might wonder
	// (":8000", "host:port").
	if strings.HasPrefix(q, "'") || strings.ContainsAny(q, "\n:#") {
		return strconv.Quote(s)
	}
	return q
}

// formatDuration writes d as briefly as time.ParseDuration reads it back:
// 5m rather than 5m0s.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

var markdownLink = regexp.MustCompile(`\[([^\]]+)\]\([^)]+\)`)

// plainDoc is a doc tag for a YAML comment: links become their text.
func plainDoc(doc string) string {
	return markdownLink.ReplaceAllString(doc, "$1")
}

// wrap breaks text into lines of at most width characters, at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
