package config

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
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

// applyEnv sets the options of v from vars, deleting what it uses.
func applyEnv(v reflect.Value, path string, vars map[string]string) error {
	for _, o := range options(v.Type()) {
		fv := v.FieldByIndex(o.index)
		key := join(path, o.key)
		if isSection(o.typ) {
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

// setFromEnv sets fv from a variable's value: a string as it is, a list
// of strings also comma-separated, anything else as YAML.
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
		fv.Set(reflect.ValueOf(items).Convert(fv.Type()))
		return nil
	}
	// Decoded into a copy, so that a bad value leaves fv as it was.
	tmp := reflect.New(fv.Type()).Elem()
	tmp.Set(fv)
	if ps := decodeString(val, tmp, ""); len(ps) > 0 {
		// Lines mean nothing in a variable: keep the keys (within a list,
		// relative to the variable's key) and the messages.
		msgs := make([]string, len(ps))
		for i, p := range ps {
			msgs[i] = p.Message
			if p.Key != "" {
				msgs[i] = p.Key + ": " + p.Message
			}
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	fv.Set(tmp)
	return nil
}
