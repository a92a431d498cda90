package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"go.yaml.in/yaml/v3"
)

// Centrifugo v6 configuration files are read as they are: a file in
// Centrifugo's layout (JSON, YAML or TOML) with the CENTRIFUGO_ environment
// applied is translated into the Herald file it means (centrifugo_map.go,
// driven by the key table of centrifugo_keys.go), and that file is then
// read like any other. `herald config convert` writes the translation out.

// The formats a configuration file can be read in.
const (
	FormatAuto       = "auto"       // detected: Centrifugo when the file has keys only Centrifugo has
	FormatHerald     = "herald"     // Herald's YAML
	FormatCentrifugo = "centrifugo" // Centrifugo v6: JSON, YAML or TOML
)

// CentrifugoEnvPrefix starts the environment variables of a Centrifugo
// configuration: client.token.hmac_secret_key is
// CENTRIFUGO_CLIENT_TOKEN_HMAC_SECRET_KEY.
const CentrifugoEnvPrefix = "CENTRIFUGO_"

// LoadFile reads the configuration file at path in format (FormatAuto,
// FormatHerald or FormatCentrifugo) and returns it with the format it was
// read in. A Centrifugo file gets the CENTRIFUGO_ variables of environ
// applied; an empty path with FormatCentrifugo, or with FormatAuto and
// CENTRIFUGO_ variables present, is a Centrifugo configuration made of the
// environment alone. Like Load, it does not Validate.
func LoadFile(path, format string, environ []string) (Config, string, error) {
	var data []byte
	if path != "" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return Config{}, "", fmt.Errorf("read config: %w", err)
		}
	}
	switch format {
	case "", FormatAuto:
		switch {
		case path != "" && IsCentrifugo(data, path):
			format = FormatCentrifugo
		case path == "" && len(centrifugoVars(environ)) > 0:
			format = FormatCentrifugo
		default:
			format = FormatHerald
		}
	case FormatHerald, FormatCentrifugo:
	default:
		return Config{}, "", fmt.Errorf("config format %q: want %s, %s or %s", format, FormatAuto, FormatHerald, FormatCentrifugo)
	}
	if format == FormatHerald {
		if path == "" {
			return Default(), format, nil
		}
		cfg, err := Parse(data)
		if err != nil {
			if sign := CentrifugoSign(data, path); sign != "" {
				return Config{}, format, fmt.Errorf("config %s (read as Herald's; it looks like a Centrifugo configuration, which --config-format centrifugo reads): %w", path, err)
			}
			return Config{}, format, fmt.Errorf("config %s: %w", path, err)
		}
		return cfg, format, nil
	}
	cfg, err := ParseCentrifugo(data, path, environ)
	if err != nil {
		name := path
		if name == "" {
			name = "environment"
		}
		return Config{}, format, fmt.Errorf("Centrifugo configuration %s:\n%w", name, err)
	}
	return cfg, format, nil
}

// ParseCentrifugo reads a Centrifugo v6 configuration (name's extension
// says JSON, YAML or TOML; without one the content does) with the
// CENTRIFUGO_ variables of environ applied.
func ParseCentrifugo(data []byte, name string, environ []string) (Config, error) {
	out, report, err := convertCentrifugo(data, name, environ)
	if err != nil {
		return Config{}, err
	}
	cfg, err := Parse(out)
	if err != nil {
		return Config{}, fmt.Errorf("as a Herald configuration:\n%w", err)
	}
	cfg.centrifugo = report
	return cfg, nil
}

// ConvertCentrifugo translates a Centrifugo v6 configuration, with the
// CENTRIFUGO_ variables of environ applied, into the Herald YAML file that
// means the same. A key Herald cannot honour is an error that names it and
// says what to do; none is dropped. Keys Centrifugo does not have either,
// and keys Herald has no use for, are listed in comments at the top.
func ConvertCentrifugo(data []byte, name string, environ []string) ([]byte, error) {
	out, _, err := convertCentrifugo(data, name, environ)
	return out, err
}

func convertCentrifugo(data []byte, name string, environ []string) ([]byte, CentrifugoReport, error) {
	var report CentrifugoReport
	tree, err := decodeCentrifugo(data, name)
	if err != nil {
		return nil, report, err
	}
	var ps Problems
	fromEnv, eps, unknownVars := applyCentrifugoEnv(tree, environ)
	ps = append(ps, eps...)
	out, mps, report := mapCentrifugoReport(tree)
	report.Unknown = append(report.Unknown, unknownVars...)
	// A problem with a value a variable set names the variable too.
	for i, p := range mps {
		for key, name := range fromEnv {
			if p.Key == key || strings.HasPrefix(p.Key, key+".") || strings.HasPrefix(key, p.Key+".") {
				mps[i].Message += " (set by " + name + ")"
				break
			}
		}
	}
	ps = append(ps, mps...)
	if len(ps) > 0 {
		return nil, report, ps
	}
	var b bytes.Buffer
	b.WriteString("# Herald configuration converted from a Centrifugo v6 configuration (herald config convert).\n" +
		"# docs/migrating-from-centrifugo.md says what each key became.\n")
	for _, p := range report.Unknown {
		fmt.Fprintf(&b, "# not used: %s\n", p)
	}
	if len(report.NotNeeded) > 0 {
		fmt.Fprintf(&b, "# not needed by Herald: %s\n", strings.Join(report.NotNeeded, ", "))
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(out); err != nil {
		return nil, report, fmt.Errorf("write the Herald configuration: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, report, fmt.Errorf("write the Herald configuration: %w", err)
	}
	return b.Bytes(), report, nil
}

// IsCentrifugo reports whether a configuration file is in Centrifugo's
// layout: JSON or TOML by its extension (Herald's files are YAML), or a key
// that Herald does not have and Centrifugo does (http_server,
// client.allowed_origins, ...).
func IsCentrifugo(data []byte, name string) bool {
	return CentrifugoSign(data, name) != ""
}

// CentrifugoSign says what makes a file Centrifugo's ("JSON" or "TOML"
// for the extension, or the first key only Centrifugo has), or "" for a
// Herald file, so that the detection can be reported.
func CentrifugoSign(data []byte, name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".toml":
		return "TOML"
	case ".json":
		return "JSON"
	}
	tree, err := decodeCentrifugo(data, name)
	if err != nil {
		return ""
	}
	return newCFTables().centrifugoOnlyKey(tree, "", "", configType)
}

// decodeCentrifugo parses a file into nested maps: by extension, as
// Centrifugo does, and by content when there is none.
func decodeCentrifugo(data []byte, name string) (map[string]any, error) {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(name)), ".")
	if format != "json" && format != "toml" && format != "yaml" && format != "yml" {
		trimmed := bytes.TrimSpace(data)
		switch {
		case len(trimmed) == 0:
			return map[string]any{}, nil
		case trimmed[0] == '{':
			format = "json"
		case isTOML(trimmed):
			format = "toml"
		default:
			format = "yaml"
		}
	}
	tree := map[string]any{}
	switch format {
	case "json":
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("not valid JSON: %w", err)
		}
		// encoding/json (and so Centrifugo) keeps the last of two equal
		// keys; the first is dropped without a word, so it is refused
		// here, as yaml.v3 refuses it in YAML and go-toml in TOML.
		if err := jsonDuplicateKeys(data); err != nil {
			return nil, err
		}
		m, ok := normalize(v).(map[string]any)
		if !ok {
			return nil, fmt.Errorf("not valid JSON: want an object at the top")
		}
		tree = m
	case "toml":
		if err := toml.Unmarshal(data, &tree); err != nil {
			return nil, fmt.Errorf("not valid TOML: %w", err)
		}
		tree = normalize(tree).(map[string]any)
	default:
		var v any
		if err := yaml.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("not valid YAML: %w", err)
		}
		if v == nil {
			return tree, nil
		}
		// Again through the node tree, which keeps the digits of an
		// integer beyond int64 that decoding into any rounds to a float.
		var n yaml.Node
		if err := yaml.Unmarshal(data, &n); err == nil {
			if exact, err := yamlNodeValue(&n); err == nil {
				v = exact
			}
		}
		m, ok := normalize(v).(map[string]any)
		if !ok {
			return nil, fmt.Errorf("not valid YAML: want a mapping of keys at the top")
		}
		tree = m
	}
	return tree, nil
}

// isTOML guesses TOML for a file without an extension: a [table] header
// or a `key = value` first line.
func isTOML(data []byte) bool {
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "[") {
			return true
		}
		k, _, ok := strings.Cut(line, "=")
		return ok && !strings.Contains(k, ":")
	}
	return false
}

// normalize makes the three decoders' values alike: maps with string
// keys, []any lists, int64 or float64 numbers.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = normalize(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
		return x
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		if isBigInteger(x.String()) {
			// An integer beyond int64 (a numeric http_api.key): its digits
			// as they are, which a string option takes exactly and a
			// number option refuses; as a float64 they would be rounded.
			return x.String()
		}
		f, _ := x.Float64()
		return f
	case int:
		return int64(x)
	case uint64:
		return int64(x)
	case float32:
		return float64(x)
	}
	return v
}

// yamlNodeValue is the value of a YAML node as decoding into any gives it,
// except an integer beyond int64 (a numeric http_api.key), which keeps its
// digits as a string, as normalize keeps a JSON one.
func yamlNodeValue(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return yamlNodeValue(n.Content[0])
	case yaml.AliasNode:
		return yamlNodeValue(n.Alias)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Tag == "!!merge" {
				// A merge key (<<: *base): the first reading has it right.
				return nil, errors.New("merge key")
			}
			v, err := yamlNodeValue(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m[n.Content[i].Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		list := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			v, err := yamlNodeValue(e)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		return list, nil
	}
	// yaml.v3 tags such an integer !!float (or !!int, written in hex).
	if (n.Tag == "!!int" || n.Tag == "!!float") && isBigInteger(n.Value) {
		return n.Value, nil
	}
	var v any
	err := n.Decode(&v)
	return v, err
}

// isBigInteger reports whether s is written as an integer (digits, with a
// sign) that int64 cannot hold.
func isBigInteger(s string) bool {
	digits := strings.TrimLeft(s, "+-")
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return false
	}
	_, err := strconv.ParseInt(s, 10, 64)
	return err != nil
}
