package cluster_test

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/heraldhq/herald/config"
)

const composePath = "../../deploy/compose/compose.yaml"

// composeFile is the part of a compose file the test reads.
type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Configs     []struct {
			Source string `yaml:"source"`
			Target string `yaml:"target"`
		} `yaml:"configs"`
		StopGracePeriod string `yaml:"stop_grace_period"`
		Networks        any    `yaml:"networks"`
	} `yaml:"services"`
	Configs map[string]struct {
		Content string `yaml:"content"`
	} `yaml:"configs"`
}

// interpolation is compose's ${VAR}, ${VAR:-default} and ${VAR:?message}.
var interpolation = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?[-?][^}]*)?\}`)

// interpolate does what compose does to each value of the file (not to
// its comments) before using it: each ${...} is replaced with its value in
// vars, and $$ becomes $.
func interpolate(t *testing.T, n *yaml.Node, vars map[string]string) {
	t.Helper()
	if n.Kind == yaml.ScalarNode {
		const dollar = "\x00"
		s := strings.ReplaceAll(n.Value, "$$", dollar)
		s = interpolation.ReplaceAllStringFunc(s, func(m string) string {
			name := interpolation.FindStringSubmatch(m)[1]
			v, ok := vars[name]
			if !ok {
				t.Errorf("compose.yaml uses ${%s}, which the test does not set", name)
			}
			return v
		})
		if strings.Contains(s, "$") {
			t.Errorf("compose.yaml's value %q has a $ that is neither ${VAR} nor $$ (compose would interpolate it)", n.Value)
		}
		n.Value = strings.ReplaceAll(s, dollar, "$")
	}
	for _, c := range n.Content {
		interpolate(t, c, vars)
	}
}

// TestComposeMatchesWalkthrough: deploy/compose/compose.yaml (which cannot
// be run here) parses, and names the settings docs/cluster.md runs: the same
// Herald configuration, the secrets in the variables Herald reads, the same
// nginx configuration with the services' names, nginx's address trusted,
// and a stop grace period longer than Herald's shutdown.
func TestComposeMatchesWalkthrough(t *testing.T) {
	raw, err := os.ReadFile(composePath)
	if err != nil {
		t.Fatal(err)
	}
	secret, key := strings.Repeat("a", 64), strings.Repeat("b", 64)
	var root yaml.Node
	if err := yaml.Unmarshal(raw, &root); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	interpolate(t, &root, map[string]string{
		"HERALD_IMAGE": "herald", "POSTGRES_PASSWORD": "pw",
		"HERALD_CLIENT_TOKEN_HMAC_SECRET_KEY": secret, "HERALD_HTTP_API_KEY": key,
	})
	var c composeFile
	if err := root.Decode(&c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	text := string(raw)
	for _, s := range []string{"postgres", "herald1", "herald2", "nginx"} {
		if _, ok := c.Services[s]; !ok {
			t.Fatalf("compose.yaml has no service %q", s)
		}
	}
	blocks := docBlocks(t, docPath)

	// nginx: the page's block, with the services' names for the addresses.
	nginxConf := c.Configs["nginx.conf"].Content
	got := replaceAll(t, "compose nginx.conf", nginxConf,
		"herald1:8000", docNode1, "herald2:8000", docNode2, "listen 8000;", "listen "+docNginx+";")
	if want := need(t, blocks, "nginx.conf"); got != want {
		t.Errorf("compose.yaml's nginx.conf differs from docs/cluster.md's:\n--- compose (names replaced)\n%s\n--- page\n%s", got, want)
	}
	if s := c.Services["nginx"]; len(s.Configs) != 1 || s.Configs[0].Source != "nginx.conf" ||
		!strings.HasPrefix(s.Configs[0].Target, "/etc/nginx/conf.d/") {
		t.Errorf("the nginx service should mount nginx.conf into /etc/nginx/conf.d/: %+v", s.Configs)
	}

	// Herald: the page's configuration, apart from what the containers
	// change (the DSN, the keys from the environment, nginx's address).
	docCfg, err := config.Parse([]byte(need(t, blocks, "herald.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	nginxIP := regexp.MustCompile(`ipv4_address: *([0-9.]+)`).FindStringSubmatch(text)
	if nginxIP == nil {
		t.Fatal("compose.yaml gives nginx no fixed ipv4_address for trusted_proxies")
	}
	var names []string
	for _, name := range []string{"herald1", "herald2"} {
		s := c.Services[name]
		if len(s.Configs) != 1 || s.Configs[0].Source != "herald.yaml" {
			t.Fatalf("%s should mount the herald.yaml config: %+v", name, s.Configs)
		}
		cfg, err := config.Parse([]byte(c.Configs["herald.yaml"].Content))
		if err != nil {
			t.Fatalf("compose.yaml's herald.yaml: %v", err)
		}
		var env []string
		for k, v := range s.Environment {
			env = append(env, k+"="+v)
		}
		unknown, err := config.ApplyEnv(&cfg, env)
		if err != nil || len(unknown) != 0 {
			t.Fatalf("%s's environment: %v (names no key: %v)", name, err, unknown)
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("%s's configuration: %v", name, err)
		}
		if w := cfg.Warnings(); len(w) != 0 {
			t.Errorf("%s's configuration warns: %v", name, w)
		}
		if cfg.Client.Token.HMACSecretKey != secret || cfg.HTTPAPI.Key != key ||
			!strings.HasPrefix(cfg.Engine.Postgres.DSN, "postgres://herald:pw@postgres:5432/") {
			t.Errorf("%s: the keys and the DSN should come from the environment: %+v", name, cfg.Engine.Postgres)
		}
		if !slices.Equal(cfg.WebSocket.TrustedProxies, []string{nginxIP[1]}) {
			t.Errorf("%s trusts %v, want nginx's address %s", name, cfg.WebSocket.TrustedProxies, nginxIP[1])
		}
		want := docCfg
		want.Engine.Postgres.DSN = cfg.Engine.Postgres.DSN
		want.Client.Token.HMACSecretKey, want.HTTPAPI.Key = secret, key
		want.WebSocket.TrustedProxies = cfg.WebSocket.TrustedProxies
		if !reflect.DeepEqual(cfg, want) {
			t.Errorf("%s's configuration differs from docs/cluster.md's herald.yaml beyond the DSN, keys and trusted proxy", name)
		}

		// The command: the mounted file, a name of its own, the port
		// nginx's upstream names.
		args := strings.Join(s.Command, " ")
		if !strings.HasPrefix(args, "serve --config "+s.Configs[0].Target+" ") || !strings.Contains(args, "--address :8000") {
			t.Errorf("%s's command %q should serve the mounted config on :8000", name, args)
		}
		names = append(names, s.Command[slices.Index(s.Command, "--name")+1])
		grace, err := time.ParseDuration(s.StopGracePeriod)
		if err != nil || grace <= cfg.Shutdown.Timeout {
			t.Errorf("%s's stop_grace_period %q should be longer than shutdown.timeout %s", name, s.StopGracePeriod, cfg.Shutdown.Timeout)
		}
	}
	if names[0] == names[1] {
		t.Errorf("both nodes are named %q", names[0])
	}

	// Every variable compose requires (${VAR:?...}) is set by the page's
	// and the file's own command lines.
	page, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`\$\{([A-Z_]+):\?`).FindAllStringSubmatch(string(raw), -1) {
		for what, text := range map[string]string{"docs/cluster.md": string(page), "compose.yaml's comment": string(raw)} {
			if !strings.Contains(text, m[1]+"=$(openssl rand") {
				t.Errorf("%s does not set %s, which compose.yaml requires", what, m[1])
			}
		}
	}
}
