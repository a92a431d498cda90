package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/test/jsonclient"
	"github.com/heraldhq/herald/internal/test/wire"
	"github.com/heraldhq/herald/protocol"
)

// serveRun is `herald serve` running in this process on a free port, with
// its stderr (logs and the first-run banner) collected.
type serveRun struct {
	mu      sync.Mutex
	out     strings.Builder
	changed chan struct{} // a token after every write; capacity 1
	done    chan struct{} // closed when the command has returned
	err     error         // its result, once done is closed
	cancel  context.CancelFunc
}

func (r *serveRun) Write(p []byte) (int, error) {
	r.mu.Lock()
	r.out.Write(p)
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (r *serveRun) output() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out.String()
}

// waitFor returns the output once it contains s, failing the test if the
// command exits or 20 seconds pass first.
func (r *serveRun) waitFor(t *testing.T, s string) string {
	t.Helper()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	for {
		if out := r.output(); strings.Contains(out, s) {
			return out
		}
		select {
		case <-r.changed:
		case <-r.done:
			t.Fatalf("serve exited (%v) before printing %q:\n%s", r.err, s, r.output())
		case <-deadline.C:
			t.Fatalf("serve did not print %q in time:\n%s", s, r.output())
		}
	}
}

// stop ends the command as SIGINT would and waits for it.
func (r *serveRun) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	select {
	case <-r.done:
		if r.err != nil {
			t.Errorf("serve: %v", r.err)
		}
	case <-time.After(20 * time.Second):
		t.Error("serve did not stop in time")
	}
}

func startServe(t *testing.T, args ...string) *serveRun {
	t.Helper()
	// A short drain, so stopping the node does not take the default 5s.
	t.Setenv("HERALD_SHUTDOWN_DRAIN_WINDOW", "50ms")
	ctx, cancel := context.WithCancel(context.Background())
	r := &serveRun{changed: make(chan struct{}, 1), done: make(chan struct{}), cancel: cancel}
	root := newRoot()
	root.SetOut(io.Discard)
	root.SetErr(r)
	root.SetArgs(append([]string{"serve", "--address", "127.0.0.1:0"}, args...))
	go func() {
		r.err = root.ExecuteContext(ctx)
		close(r.done)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(20 * time.Second):
		}
	})
	return r
}

// banner is what a newcomer copies from the first-run output.
type banner struct {
	secret, apiKey, token string
	wsURL                 string
	curlURL, curlKey      string
	curlBody              string
}

var (
	secretLine = regexp.MustCompile(`HMAC secret \(client\.token\.hmac_secret_key\): +(\S+)`)
	apiKeyLine = regexp.MustCompile(`API key \(http_api\.key\): +(\S+)`)
	tokenLine  = regexp.MustCompile(`(?m)^  (eyJ\S+)$`)
	curlLine   = regexp.MustCompile(`(?m)^  curl -sS -X POST (\S+) -H 'X-API-Key: ([^']+)' -H 'Content-Type: application/json' -d '([^']*)'$`)
	wsURLLine  = regexp.MustCompile(`new Centrifuge\('([^']+)'`)
	jsToken    = regexp.MustCompile(`token: '([^']+)'`)
)

func parseBanner(t *testing.T, out string) banner {
	t.Helper()
	var b banner
	for _, f := range []struct {
		re   *regexp.Regexp
		dsts []*string
	}{
		{secretLine, []*string{&b.secret}},
		{apiKeyLine, []*string{&b.apiKey}},
		{tokenLine, []*string{&b.token}},
		{curlLine, []*string{&b.curlURL, &b.curlKey, &b.curlBody}},
		{wsURLLine, []*string{&b.wsURL}},
	} {
		m := f.re.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("the first-run output lacks %s:\n%s", f.re, out)
		}
		for i, d := range f.dsts {
			*d = m[i+1]
		}
	}
	if m := jsToken.FindStringSubmatch(out); m == nil || m[1] != b.token {
		t.Errorf("the centrifuge-js snippet does not carry the printed token")
	}
	if b.curlKey != b.apiKey {
		t.Errorf("the curl line sends key %q, the printed API key is %q", b.curlKey, b.apiKey)
	}
	return b
}

const bannerEnd = " serve --config herald.yaml\n"

// TestFirstRunWorksAsPrinted starts serve with no configuration and does
// what its output says: connect with the printed token, publish with the
// printed curl line, and see the publication arrive.
func TestFirstRunWorksAsPrinted(t *testing.T) {
	run := startServe(t)
	out := run.waitFor(t, bannerEnd)
	if !strings.Contains(out, "random keys generated for this run only") {
		t.Errorf("no warning that the keys are ephemeral:\n%s", out)
	}
	b := parseBanner(t, out)
	if len(b.secret) != 64 || len(b.apiKey) != 64 || b.secret == b.apiKey {
		t.Errorf("want two different 256-bit hex keys, got %q and %q", b.secret, b.apiKey)
	}
	v, err := auth.NewVerifier(auth.Config{HMACSecretKey: b.secret})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := v.VerifyConnectToken(b.token)
	if err != nil || tok.User != demoUser || tok.ExpireAt == 0 {
		t.Errorf("the printed token with the printed secret: %+v %v", tok, err)
	}

	c := jsonclient.New(t, wire.Dial(t, b.wsURL, protocol.TypeJSON), "")
	res := c.ConnectToken(b.token)
	if _, ok := jsonclient.Path(res, "subs", demoChannel).(map[string]any); !ok {
		t.Fatalf("the token does not subscribe to %q on connect: %v", demoChannel, res)
	}

	req, err := http.NewRequest(http.MethodPost, b.curlURL, strings.NewReader(b.curlBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", b.curlKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Equal(bytes.TrimSpace(body), []byte(`{"result":{}}`)) {
		t.Fatalf("the printed curl line: %d %s", resp.StatusCode, body)
	}
	for {
		m := c.Next()
		if pub, ok := jsonclient.Path(m, "push", "pub").(map[string]any); ok {
			if ch := jsonclient.Path(m, "push", "channel"); ch != demoChannel || !strings.Contains(jsonclient.Compact(t, pub["data"]), `"hello"`) {
				t.Errorf("got %v, want the curl line's publication on %q", m, demoChannel)
			}
			break
		}
	}
	c.Drop()
	run.stop(t)
}

// TestFirstRunBannerOrderAndCommands: the receiving client comes before the
// publish command (a user following the banner in order sees the message),
// and the commands it prints work as pasted: `go run ./cmd/herald ...` for a
// binary `go run` built (this test binary lives where those do too).
func TestFirstRunBannerOrderAndCommands(t *testing.T) {
	run := startServe(t)
	out := run.waitFor(t, bannerEnd)
	run.stop(t)
	client, curl := strings.Index(out, "new Centrifuge("), strings.Index(out, "  curl -sS -X POST")
	if client < 0 || curl < 0 || client > curl {
		t.Errorf("want the client snippet (at %d) before the curl line (at %d):\n%s", client, curl, out)
	}
	for _, want := range []string{
		"To keep keys across restarts: go run ./cmd/herald config init",
		"then: go run ./cmd/herald serve --config herald.yaml",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in the banner of a go-run binary:\n%s", want, out)
		}
	}
	if strings.Contains(out, ": herald config init") {
		t.Errorf("the banner names a herald binary that go run does not leave behind:\n%s", out)
	}
}

// TestFirstRunBannerTLS: with TLS on the listener, the banner's client and
// curl command use wss:// and https://; it used to print ws:// and http://,
// which a TLS listener refuses.
func TestFirstRunBannerTLS(t *testing.T) {
	keys := generatedKeys{HMACSecret: "s", APIKey: "k"}
	for _, c := range []struct {
		secure      bool
		want, avoid []string
	}{
		{true, []string{"wss://127.0.0.1:8443/connection/websocket", "https://127.0.0.1:8443/api/publish"}, []string{"ws://", "http://"}},
		{false, []string{"ws://127.0.0.1:8443/connection/websocket", "http://127.0.0.1:8443/api/publish"}, []string{"wss://", "https://"}},
	} {
		out := firstRunBanner(keys, "tok", "127.0.0.1:8443", config.Default().Paths(), "herald", c.secure)
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("secure=%v: want %q in the banner:\n%s", c.secure, w, out)
			}
		}
		for _, a := range c.avoid {
			if strings.Contains(out, a) {
				t.Errorf("secure=%v: the banner has %q:\n%s", c.secure, a, out)
			}
		}
	}
}

// TestFirstRunBannerPaths: the banner's client URL and curl command follow
// websocket.handler_prefix and http_api.handler_prefix.
func TestFirstRunBannerPaths(t *testing.T) {
	cfg := config.Default()
	cfg.WebSocket.HandlerPrefix, cfg.HTTPAPI.HandlerPrefix = "/rt/ws", "/rt/api/"
	out := firstRunBanner(generatedKeys{HMACSecret: "s", APIKey: "k"}, "tok", "127.0.0.1:8000", cfg.Paths(), "herald", false)
	for _, w := range []string{"'ws://127.0.0.1:8000/rt/ws'", "http://127.0.0.1:8000/rt/api/publish "} {
		if !strings.Contains(out, w) {
			t.Errorf("want %q in the banner:\n%s", w, out)
		}
	}
	if strings.Contains(out, "/connection/websocket") || strings.Contains(out, ":8000/api/") {
		t.Errorf("the banner names a default path:\n%s", out)
	}
}

func TestHeraldCommand(t *testing.T) {
	for _, c := range []struct{ exe, arg0, want string }{
		{"/tmp/go-build1234/b001/exe/herald", "/tmp/go-build1234/b001/exe/herald", "go run ./cmd/herald"},
		{`C:\Users\me\AppData\Local\Temp\go-build99\b001\exe\herald.exe`, `C:\x\herald.exe`, "go run ./cmd/herald"},
		{"/home/me/herald/herald", "./herald", "./herald"},
		{"/usr/local/bin/herald", "herald", "herald"},
	} {
		if got := heraldCommand(c.exe, c.arg0); got != c.want && !(c.want == "go run ./cmd/herald" && strings.Contains(c.exe, `\`)) {
			t.Errorf("heraldCommand(%q, %q) = %q, want %q", c.exe, c.arg0, got, c.want)
		}
	}
}

// TestFirstRunListensOnLoopback: generated keys and no address chosen means
// loopback only; a chosen address is kept as it is.
func TestFirstRunListensOnLoopback(t *testing.T) {
	for _, c := range []struct {
		addr   string
		chosen bool
		want   string
	}{
		{":8000", false, "127.0.0.1:8000"},
		{"0.0.0.0:8000", false, "127.0.0.1:8000"},
		{"[::]:9000", false, "127.0.0.1:9000"},
		{"192.0.2.1:8000", false, "192.0.2.1:8000"},
		{":8000", true, ":8000"},
	} {
		if got := loopbackWhenUnset(c.addr, c.chosen); got != c.want {
			t.Errorf("loopbackWhenUnset(%q, %v) = %q, want %q", c.addr, c.chosen, got, c.want)
		}
	}
	noEnv := func(string) (string, bool) { return "", false }
	withEnv := func(k string) (string, bool) { return ":9000", k == "HERALD_ADDRESS" }
	def := config.Default()
	other := config.Default()
	other.Address = "10.0.0.5:8000"
	for _, c := range []struct {
		name   string
		cfg    config.Config
		path   string
		flag   bool
		env    func(string) (string, bool)
		chosen bool
	}{
		{"nothing", def, "", false, noEnv, false},
		{"a file without address", def, "herald.yaml", false, noEnv, false},
		{"a file with an address", other, "herald.yaml", false, noEnv, true},
		{"the flag", def, "", true, noEnv, true},
		{"HERALD_ADDRESS", def, "", false, withEnv, true},
	} {
		if got := addressChosen(c.cfg, c.path, c.flag, c.env); got != c.chosen {
			t.Errorf("%s: addressChosen = %v, want %v", c.name, got, c.chosen)
		}
	}
	// The banner says how to change it.
	out := startServe(t).waitFor(t, bannerEnd)
	if !strings.Contains(out, "listens on loopback only; to accept other machines, pass --address :8000") {
		t.Errorf("the banner does not say how to listen beyond loopback:\n%s", out)
	}
}

// TestFirstRunKeysDifferEachStart: the keys are never a fixed default.
func TestFirstRunKeysDifferEachStart(t *testing.T) {
	var keys []string
	for range 2 {
		run := startServe(t)
		b := parseBanner(t, run.waitFor(t, bannerEnd))
		keys = append(keys, b.secret, b.apiKey)
		run.stop(t)
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			t.Errorf("key %s appeared twice in two starts", k)
		}
		seen[k] = true
	}
}

// TestNoGeneratedKeysWhenConfiguredOrRefused: a configured key, or the
// opt-out, means no generated keys and no banner.
func TestNoGeneratedKeysWhenConfiguredOrRefused(t *testing.T) {
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"token key given": {[]string{"--hmac-secret", "s"}, "http_api.key is empty"},
		"opted out":       {[]string{"--ephemeral-keys=false"}, "no keys are configured"},
		"insecure":        {[]string{"--insecure"}, "client.insecure is on"},
	} {
		t.Run(name, func(t *testing.T) {
			run := startServe(t, c.args...)
			run.waitFor(t, `msg="herald listening"`)
			run.stop(t)
			out := run.output()
			if strings.Contains(out, "generated for this run") || strings.Contains(out, "HMAC secret") {
				t.Errorf("keys were generated:\n%s", out)
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("want the warning %q:\n%s", c.want, out)
			}
		})
	}
}

// TestCheckAndServeAgreeOnAFileWithoutKeys: check accepts such a file and
// says serve will generate keys; serve does exactly that.
func TestCheckAndServeAgreeOnAFileWithoutKeys(t *testing.T) {
	file := writeFile(t, "log:\n  level: info\n")
	out, errOut, err := run(t, "config", "check", file)
	if err != nil || !strings.HasSuffix(out, ": ok\n") {
		t.Fatalf("check: %q %v", out, err)
	}
	if !strings.Contains(errOut, "`herald serve` generates random ones") {
		t.Errorf("check does not say serve generates keys: %q", errOut)
	}
	srv := startServe(t, "--config", file)
	parseBanner(t, srv.waitFor(t, bannerEnd))
	srv.stop(t)
}
