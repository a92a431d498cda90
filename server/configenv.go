package server

import (
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// EnvPrefix starts the environment variable of every configuration key:
// client.token.hmac_secret_key is HERALD_CLIENT_TOKEN_HMAC_SECRET_KEY.
const EnvPrefix = "HERALD_"

// EnvName is the environment variable that overrides a dotted key.
func EnvName(key string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// ApplyEnv sets every key whose HERALD_ variable is present in environ
// (as os.Environ gives it). Values are YAML scalars, or YAML/JSON for
// lists (channel.namespaces, websocket.allowed_origins; a list of strings
// may also be comma-separated). It returns the HERALD_ variables that name
// no key, so the caller can warn about them.
func ApplyEnv(cfg *Config, environ []string) (unknown []string, err error) {
	vars := make(map[string]string)
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && strings.HasPrefix(k, EnvPrefix) {
			vars[k] = v
		}
	}
	if err := applyEnv(reflect.ValueOf(cfg).Elem(), "", vars); err != nil {
		return nil, err
	}
	for k := range vars {
		if !strings.HasPrefix(k, EnvPrefix+"TEST_") {
			unknown = append(unknown, k)
		}
	}
	return unknown, nil
}

// applyEnv sets the fields of v from vars, deleting what it uses.
func applyEnv(v reflect.Value, path string, vars map[string]string) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		fv := v.Field(i)
		if strings.Contains(opts, "inline") {
			if err := applyEnv(fv, path, vars); err != nil {
				return err
			}
			continue
		}
		key := join(path, name)
		if f.Type.Kind() == reflect.Struct && !isLeafType(f.Type) {
			if err := applyEnv(fv, key, vars); err != nil {
				return err
			}
			continue
		}
		env := EnvName(key)
		val, ok := vars[env]
		if !ok {
			continue
		}
		delete(vars, env)
		if err := setFromEnv(fv, val); err != nil {
			return fmt.Errorf("%s (for %s): %w", env, key, err)
		}
	}
	return nil
}

func setFromEnv(fv reflect.Value, val string) error {
	switch {
	case fv.Kind() == reflect.String:
		fv.SetString(val)
		return nil
	case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.String && !strings.HasPrefix(strings.TrimSpace(val), "["):
		var items []string
		for _, s := range strings.Split(val, ",") {
			if s = strings.TrimSpace(s); s != "" {
				items = append(items, s)
			}
		}
		fv.Set(reflect.ValueOf(items))
		return nil
	}
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(val), &node); err != nil {
		return fmt.Errorf("not a valid value: %w", err)
	}
	if ps := checkNode(&node, fv.Type(), ""); len(ps) > 0 {
		return ps
	}
	ptr := reflect.New(fv.Type())
	if len(node.Content) > 0 {
		if err := node.Decode(ptr.Interface()); err != nil {
			return err
		}
	}
	fv.Set(ptr.Elem())
	return nil
}
