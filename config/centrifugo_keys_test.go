package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCentrifugoKeysMatchHerald checks the key table against Herald's own
// option set: every Herald key a row writes exists in Config, and no row
// drops or refuses a Centrifugo key that Herald has under the same name
// (or under the name its section is renamed to), so a key Herald gains
// cannot keep a "refused" row.
func TestCentrifugoKeysMatchHerald(t *testing.T) {
	for _, p := range centrifugoKeyProblems(centrifugoKeys()) {
		t.Error(p)
	}
}

// TestCentrifugoKeyProblemsFindsStaleRows: the check above fails on the
// rows it exists to catch.
func TestCentrifugoKeyProblemsFindsStaleRows(t *testing.T) {
	for name, c := range map[string]struct {
		row  centrifugoKey
		want string
	}{
		"refused, Herald has it": {
			centrifugoKey{Key: "client.token.jwks_public_endpoint", Action: cfRefuse, Note: "no JWKS"},
			"Herald has client.token.jwks_public_endpoint"},
		"refused in a list item, Herald has it": {
			centrifugoKey{Key: "channel.namespaces[].allow_tags_filter", Action: cfRefuse, Note: "no tags filter"},
			"Herald has channel.namespaces[].allow_tags_filter"},
		"refused below a renamed section, Herald has it": {
			centrifugoKey{Key: "http_server.tls_autocert.email", Action: cfRefuse, Note: "no"},
			"Herald has tls_autocert.email"},
		"dropped, Herald has it": {
			centrifugoKey{Key: "consumers", Action: cfDrop, Note: "no consumers"},
			"Herald has consumers"},
		"renamed to a key Herald lacks": {
			centrifugoKey{Key: "proxies[].grpc.tls", Herald: "proxies[].grpc_tls", Action: cfRename},
			"proxies[].grpc_tls, which Herald does not have"},
		"converted without a converter": {
			centrifugoKey{Key: "log.level", Herald: "log.level", Action: cfConvert},
			"no converter"},
		"refused without a reason": {
			centrifugoKey{Key: "pid_file", Action: cfRefuse},
			"needs a note"},
	} {
		// The table with c.row in place of the row of its key.
		rows := slices.DeleteFunc(centrifugoKeys(), func(r centrifugoKey) bool { return r.Key == c.row.Key })
		rows = append(rows, c.row)
		slices.SortFunc(rows, func(a, b centrifugoKey) int { return strings.Compare(a.Key, b.Key) })
		ps := centrifugoKeyProblems(rows)
		found := false
		for _, p := range ps {
			found = found || strings.Contains(p, c.want)
		}
		if !found {
			t.Errorf("%s: %q, want a problem saying %q", name, ps, c.want)
		}
	}
}

// centrifugoKeyProblems checks the rows of a key table.
func centrifugoKeyProblems(rows []centrifugoKey) []string {
	var ps []string
	bad := func(r centrifugoKey, format string, args ...any) {
		ps = append(ps, r.Key+": "+fmt.Sprintf(format, args...))
	}
	byKey := map[string]centrifugoKey{}
	for i, r := range rows {
		if i > 0 && rows[i-1].Key >= r.Key {
			bad(r, "after %s: the rows are in key order, one per key", rows[i-1].Key)
		}
		byKey[r.Key] = r
	}
	for _, r := range rows {
		if (r.Action == cfConvert) != (r.Convert != nil) {
			bad(r, "a conversion names its converter, and only a conversion has one (no converter, or one that is not used)")
		}
		if len(r.Takes) > 0 && r.Action != cfRefuse {
			bad(r, "Takes applies to refused keys only")
		}
		switch r.Action {
		case cfRename, cfConvert:
			if r.Herald == "" {
				bad(r, "names no Herald key")
			}
			for _, h := range strings.Split(r.Herald, ", ") {
				if !heraldKeyExists(h) {
					bad(r, "becomes %s, which Herald does not have", h)
				}
			}
			if r.Action == cfRename && strings.Contains(r.Key, "[]") && listOf(r.Key) != listOf(r.Herald) {
				bad(r, "a key of a list item is renamed within the item: %s is not in %s[]", r.Herald, listOf(r.Key))
			}
		case cfDrop, cfRefuse, cfTune:
			if r.Herald != "" {
				bad(r, "a dropped or refused key names no Herald key (the note says what to use instead)")
			}
			if r.Note == "" {
				bad(r, "needs a note: why Herald does not need it, or what to do instead")
			}
			for _, h := range heraldEquivalents(r.Key, byKey) {
				if heraldKeyExists(h) {
					bad(r, "is dropped or refused, but Herald has %s: make the row a rename (or a conversion)", h)
				}
			}
		default:
			bad(r, "no action")
		}
	}
	return ps
}

// heraldEquivalents are the Herald keys a Centrifugo key would be if Herald
// had it: the same key, and the key below a section that a row renames
// (http_server.tls_autocert.email: tls_autocert.email).
func heraldEquivalents(key string, byKey map[string]centrifugoKey) []string {
	out := []string{key}
	parts := strings.Split(key, ".")
	for i := len(parts) - 1; i > 0; i-- {
		r, ok := byKey[strings.Join(parts[:i], ".")]
		if ok && r.writes() && !strings.Contains(r.Herald, ", ") && heraldKeyIsSection(r.Herald) {
			out = append(out, r.Herald+"."+strings.Join(parts[i:], "."))
		}
	}
	return out
}

// heraldKeyExists reports whether Config has a key, written as the table
// writes them ("[]" for any item of a list, alone at the end for the list).
func heraldKeyExists(key string) bool { return heraldKeyOf(key) != nil }

func heraldKeyIsSection(key string) bool {
	t := heraldKeyOf(key)
	return t != nil && isSection(t)
}

func heraldKeyOf(key string) reflect.Type {
	t := configType
	for _, part := range strings.Split(key, ".") {
		name, list := strings.CutSuffix(part, "[]")
		if t.Kind() != reflect.Struct {
			return nil
		}
		o, ok := optionByKey(t, name)
		if !ok {
			return nil
		}
		t = o.typ
		if list {
			if t.Kind() != reflect.Slice {
				return nil
			}
			t = t.Elem()
		}
	}
	return t
}

// listOf is the list a key with "[]" is in: "proxies" for proxies[].x.
func listOf(key string) string {
	list, _, _ := strings.Cut(key, "[]")
	return list
}

// TestCentrifugoFormerlyRefusedKeys: keys that Herald once refused and has
// since gained are taken, and Centrifugo's TLS objects of outgoing
// connections become Herald's.
func TestCentrifugoFormerlyRefusedKeys(t *testing.T) {
	cfg, err := ParseCentrifugo([]byte(`{
  "client": {"token": {"jwks_public_endpoint": "https://idp.example/jwks", "user_id_claim": "uid", "audience_regex": "^a"}},
  "channel": {"namespaces": [{"name": "feed", "allow_tags_filter": true, "force_recovery": true, "force_recovery_mode": "cache", "history_size": 1, "history_ttl": "60s"}]},
  "engine": {"type": "redis", "redis": {"address": "r:6379", "tls": {"enabled": true, "server_ca_pem": "/ca.pem", "server_name": "redis.internal", "client_ca_pem": "/unused.pem"}}},
  "proxies": [{"name": "g", "endpoint": "grpc://b:9000", "grpc": {"tls": {"enabled": true, "cert_pem": "/c.pem", "key_pem": "/k.pem"}, "credentials_key": "authorization", "credentials_value": "s"}}],
  "grpc_api": {"enabled": true, "port": 10000, "key": "k"},
  "http_api": {"disabled": true},
  "opentelemetry": {"consuming": true}
}`), "c.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ns, r, p := cfg.Channel.Namespaces[0], cfg.Engine.Redis.TLS, cfg.Proxies[0].GRPC
	checks := map[string][2]any{
		"jwks":             {cfg.Client.Token.JWKSPublicEndpoint, "https://idp.example/jwks"},
		"user_id_claim":    {cfg.Client.Token.UserIDClaim, "uid"},
		"tags filter":      {ns.AllowTagsFilter, true},
		"cache recovery":   {string(ns.ForceRecoveryMode), "cache"},
		"history ttl":      {ns.HistoryTTL, time.Minute},
		"redis tls":        {r.Enabled, true},
		"redis ca":         {r.CAFile, "/ca.pem"},
		"redis name":       {r.ServerName, "redis.internal"},
		"redis cert":       {r.CertFile, ""},
		"grpc proxy tls":   {p.TLS.Enabled, true},
		"grpc proxy cert":  {p.TLS.CertFile, "/c.pem"},
		"grpc proxy creds": {p.CredentialsKey, "authorization"},
		"grpc api":         {cfg.GRPCAPIConfig.Enabled, true},
		"api disabled":     {cfg.HTTPAPI.Disabled, true},
	}
	for name, c := range checks {
		if !reflect.DeepEqual(c[0], c[1]) {
			t.Errorf("%s: got %v, want %v", name, c[0], c[1])
		}
	}
	// The TLS object from the environment, as Centrifugo names its keys.
	cfg, err = ParseCentrifugo([]byte(`{"engine": {"type": "redis"}}`), "c.json", []string{
		"CENTRIFUGO_ENGINE_REDIS_TLS_ENABLED=true", "CENTRIFUGO_ENGINE_REDIS_TLS_SERVER_CA_PEM=/ca.pem", "CENTRIFUGO_ENGINE_REDIS_TLS_INSECURE_SKIP_VERIFY=1"})
	if r := cfg.Engine.Redis.TLS; err != nil || !r.Enabled || r.CAFile != "/ca.pem" || !r.InsecureSkipVerify {
		t.Errorf("engine.redis.tls from the environment: %v %+v", err, r)
	}
	_, ps := mapCentrifugo(map[string]any{"engine": map[string]any{"redis": map[string]any{"tls": map[string]any{"enabled": true, "cert_pem": "-----BEGIN CERTIFICATE-----\nMII"}}}})
	if !hasProblem(ps, "engine.redis.tls.cert_pem", "invalid PEM data") {
		t.Errorf("broken PEM in engine.redis.tls: %v", ps)
	}
}
