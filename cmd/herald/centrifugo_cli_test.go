package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/heraldhq/herald/auth"
)

// cliBinaries builds the command once into a temporary directory and
// links it as centrifugo beside herald, the two names the image carries.
type cliBinaries struct {
	dir, herald, centrifugo string
}

func buildCLI(t *testing.T) cliBinaries {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	b := cliBinaries{dir: dir, herald: filepath.Join(dir, "herald"), centrifugo: filepath.Join(dir, "centrifugo")}
	if out, err := exec.CommandContext(ctx, goTool, "build", "-o", b.herald, ".").CombinedOutput(); err != nil {
		t.Fatalf("build herald: %v\n%s", err, out)
	}
	if err := os.Symlink("herald", b.centrifugo); err != nil {
		t.Fatal(err)
	}
	return b
}

// runIn runs bin with args in dir and returns its standard output, its
// standard error and its exit code.
func runIn(t *testing.T, dir, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return out.String(), errOut.String(), code
}

// TestCentrifugoCommandLine runs Centrifugo's commands, as compose files
// and scripts type them, against the binary named centrifugo.
func TestCentrifugoCommandLine(t *testing.T) {
	b := buildCLI(t)
	dir := t.TempDir()
	// genconfig writes config.json, Centrifugo's default -c of every command.
	if out, _, code := runIn(t, dir, b.centrifugo, "genconfig"); code != 0 {
		t.Fatalf("genconfig: exit %d: %s", code, out)
	}
	var file struct {
		Client struct {
			Token struct {
				HMACSecretKey string `json:"hmac_secret_key"`
			} `json:"token"`
		} `json:"client"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &file); err != nil || file.Client.Token.HMACSecretKey == "" {
		t.Fatalf("genconfig's config.json has no client.token.hmac_secret_key (%v):\n%s", err, data)
	}
	verifier, err := auth.NewVerifier(auth.Config{HMACSecretKey: file.Client.Token.HMACSecretKey})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("gentoken and checktoken", func(t *testing.T) {
		out, _, code := runIn(t, dir, b.centrifugo, "gentoken", "-u", "42", "-t", "3600")
		m := regexp.MustCompile(`^HMAC SHA-256 JWT for user "42" with expiration TTL 1h0m0s:\n(eyJ\S+)\n$`).FindStringSubmatch(out)
		if code != 0 || m == nil {
			t.Fatalf("gentoken: exit %d, output %q", code, out)
		}
		tok, err := verifier.VerifyConnectToken(m[1])
		if err != nil || tok.User != "42" {
			t.Fatalf("the token with the file's secret: %+v %v", tok, err)
		}
		if left := time.Until(time.Unix(tok.ExpireAt, 0)); left < 59*time.Minute || left > time.Hour {
			t.Errorf("token expires in %s, want an hour", left)
		}
		out, _, code = runIn(t, dir, b.centrifugo, "checktoken", m[1])
		if code != 0 || !strings.HasPrefix(out, "valid token for user 42\npayload: {") {
			t.Errorf("checktoken: exit %d, output %q", code, out)
		}
		quiet, _, _ := runIn(t, dir, b.centrifugo, "gentoken", "-q", "-u", "7")
		if !strings.HasPrefix(quiet, "eyJ") || strings.ContainsAny(quiet, " \n") {
			t.Errorf("gentoken -q: %q, want the token alone", quiet)
		}
		out, _, code = runIn(t, dir, b.centrifugo, "checktoken", m[1]+"x")
		if code == 0 || !strings.HasPrefix(out, "error: token with algorithm HS256 and claims {") {
			t.Errorf("checktoken of a bad signature: exit %d, output %q", code, out)
		}
	})

	t.Run("gensubtoken and checksubtoken", func(t *testing.T) {
		out, _, code := runIn(t, dir, b.centrifugo, "gensubtoken", "-u", "42", "-s", "chat", "-t", "60")
		m := regexp.MustCompile(`^HMAC SHA-256 JWT for user "42" and channel "chat" with expiration TTL 1m0s:\n(eyJ\S+)\n$`).FindStringSubmatch(out)
		if code != 0 || m == nil {
			t.Fatalf("gensubtoken: exit %d, output %q", code, out)
		}
		tok, err := verifier.VerifySubscribeToken(m[1])
		if err != nil || tok.User != "42" || tok.Channel != "chat" {
			t.Fatalf("the token with the file's secret: %+v %v", tok, err)
		}
		out, _, code = runIn(t, dir, b.centrifugo, "checksubtoken", m[1])
		if code != 0 || !strings.HasPrefix(out, "valid subscription token for user \"42\" and channel \"chat\"\npayload: {") {
			t.Errorf("checksubtoken: exit %d, output %q", code, out)
		}
		if out, _, code := runIn(t, dir, b.centrifugo, "gensubtoken", "-u", "42"); code == 0 || out != "channel is required\n" {
			t.Errorf("gensubtoken without -s: exit %d, output %q", code, out)
		}
	})

	t.Run("checkconfig names the bad key", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"client": {"token": {"hmac_secret_key": "s"}}, "http_server": {"port": "abc"}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		out, _, code := runIn(t, dir, b.centrifugo, "checkconfig", "-c", "bad.json")
		if code == 0 || !strings.Contains(out, "http_server.port") {
			t.Errorf("checkconfig -c bad.json: exit %d, output %q", code, out)
		}
		if out, _, code := runIn(t, dir, b.centrifugo, "checkconfig"); code != 0 {
			t.Errorf("checkconfig of genconfig's file: exit %d, output %q", code, out)
		}
		if out, _, code := runIn(t, dir, b.centrifugo, "checkconfig", "-c", "missing.json"); code == 0 || out != "config file not found\n" {
			t.Errorf("checkconfig of a missing file: exit %d, output %q", code, out)
		}
	})

	t.Run("defaultconfig passes checkconfig", func(t *testing.T) {
		for _, name := range []string{"default.json", "default.yaml", "default.toml"} {
			if out, _, code := runIn(t, dir, b.centrifugo, "defaultconfig", "-c", name); code != 0 {
				t.Fatalf("defaultconfig -c %s: exit %d: %s", name, code, out)
			}
			if out, errOut, code := runIn(t, dir, b.centrifugo, "checkconfig", "-c", name); code != 0 {
				t.Errorf("checkconfig -c %s: exit %d: %s%s", name, code, out, errOut)
			}
		}
		out, _, code := runIn(t, dir, b.centrifugo, "defaultconfig", "-c", "x.json", "--dry-run")
		if code != 0 || !json.Valid([]byte(out)) {
			t.Errorf("defaultconfig --dry-run: exit %d, output %q", code, out)
		}
		env, _, code := runIn(t, dir, b.centrifugo, "defaultenv")
		if code != 0 || !strings.Contains(env, "\nCENTRIFUGO_HTTP_SERVER_PORT=8000\n") || !strings.Contains(env, "\nCENTRIFUGO_LOG_LEVEL=\"info\"\n") {
			t.Errorf("defaultenv: exit %d, output %q", code, env)
		}
	})

	t.Run("defaultconfig and defaultenv print Centrifugo's own", func(t *testing.T) {
		// Byte for byte what Centrifugo 6.9.1 prints (dry run: the file
		// and a new line), in each format.
		for _, name := range []string{"config.json", "config.yaml", "config.toml"} {
			want, err := os.ReadFile(filepath.Join(cfDefaultsDir, name))
			if err != nil {
				t.Fatal(err)
			}
			out, _, code := runIn(t, dir, b.centrifugo, "defaultconfig", "-d", "-c", "x"+filepath.Ext(name))
			if code != 0 || out != string(want)+"\n" {
				t.Errorf("defaultconfig -d -c x%s: exit %d, %d bytes, want Centrifugo's %d and a new line", filepath.Ext(name), code, len(out), len(want))
			}
		}
		if out, _, code := runIn(t, dir, b.centrifugo, "defaultconfig", "-d", "-c", "x.ini"); code == 0 || !strings.Contains(out, "supported extensions: json, toml, yaml, yml") {
			t.Errorf("defaultconfig -c x.ini: exit %d, output %q", code, out)
		}
		want, err := os.ReadFile(filepath.Join(cfDefaultsDir, "env.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if env, _, code := runIn(t, dir, b.centrifugo, "defaultenv"); code != 0 || env != string(want) {
			t.Errorf("defaultenv: exit %d, %d bytes, want Centrifugo's %d", code, len(env), len(want))
		}

		// A base file's keys over the defaults; with
		// --base-non-zero-only, its non-zero keys alone.
		base := `{"http_server": {"port": 9000}, "channel": {"namespaces": [{"name": "chat", "presence": true}, {"name": "feed"}]}}`
		if err := os.WriteFile(filepath.Join(dir, "base.json"), []byte(base), 0o600); err != nil {
			t.Fatal(err)
		}
		out, _, code := runIn(t, dir, b.centrifugo, "defaultconfig", "-d", "-c", "x.json", "-b", "base.json")
		var tree struct {
			HTTPServer struct{ Port int } `json:"http_server"`
			Client     struct {
				PingInterval string `json:"ping_interval"`
			} `json:"client"`
		}
		if err := json.Unmarshal([]byte(out), &tree); code != 0 || err != nil || tree.HTTPServer.Port != 9000 || tree.Client.PingInterval == "" {
			t.Errorf("defaultconfig -b base.json: exit %d, %v, %+v", code, err, tree)
		}
		env, _, code := runIn(t, dir, b.centrifugo, "defaultenv", "-b", "base.json")
		if code != 0 || !strings.Contains(env, "\nCENTRIFUGO_HTTP_SERVER_PORT=9000\n") || !strings.Contains(env, "\nCENTRIFUGO_CHANNEL_NAMESPACES=\"chat feed\"\n") || !strings.Contains(env, "\nCENTRIFUGO_LOG_LEVEL=\"info\"\n") {
			t.Errorf("defaultenv -b base.json: exit %d, output %q", code, env)
		}
		env, _, code = runIn(t, dir, b.centrifugo, "defaultenv", "-b", "base.json", "--base-non-zero-only")
		if code != 0 || env != "CENTRIFUGO_CHANNEL_NAMESPACES=\"chat feed\"\nCENTRIFUGO_HTTP_SERVER_PORT=9000\n" {
			t.Errorf("defaultenv -b base.json --base-non-zero-only: exit %d, output %q", code, env)
		}
	})

	t.Run("the root runs a node with Centrifugo's flags", func(t *testing.T) {
		// A variable the flag overrides: flags win over the environment.
		addr := startBinary(t, dir, b.centrifugo, []string{"CENTRIFUGO_HTTP_SERVER_PORT=1"},
			"-c", "config.json", "--client.insecure", "--http_server.port", "0", "-a", "127.0.0.1", "--health.enabled")
		resp, err := http.Get("http://" + addr + "/health")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("/health: %s", resp.Status)
		}
	})

	t.Run("tests/centrifugo-cli.sh", func(t *testing.T) {
		for _, tool := range []string{"bash", "curl", "timeout", "tail"} {
			if _, err := exec.LookPath(tool); err != nil {
				t.Skipf("no %s for the script", tool)
			}
		}
		script, err := filepath.Abs(filepath.Join("..", "..", "tests", "centrifugo-cli.sh"))
		if err != nil {
			t.Fatal(err)
		}
		out, errOut, code := runIn(t, dir, "bash", script, b.herald)
		if code != 0 || !strings.HasPrefix(out, "ok: ") {
			t.Errorf("centrifugo-cli.sh: exit %d\n%s%s", code, out, errOut)
		}
	})

	t.Run("herald keeps its commands", func(t *testing.T) {
		out, _, code := runIn(t, dir, b.herald, "version")
		if code != 0 || !strings.HasPrefix(out, "herald ") {
			t.Errorf("herald version: exit %d, output %q", code, out)
		}
		out, _, code = runIn(t, dir, b.herald)
		if code != 0 || !strings.Contains(out, "Usage:") {
			t.Errorf("herald alone: exit %d, want the help, got %q", code, out)
		}
		// Centrifugo's names that Herald has no other use for work too.
		tok, _, code := runIn(t, dir, b.herald, "gentoken", "-q", "-u", "42")
		if _, err := verifier.VerifyConnectToken(tok); code != 0 || err != nil {
			t.Errorf("herald gentoken: exit %d, %v", code, err)
		}
		addr := startBinary(t, dir, b.herald, nil, "-c", "config.json", "--http_server.port", "0", "--http_server.address", "127.0.0.1")
		if addr == "" {
			t.Error("herald -c config.json did not start a node")
		}
	})
}

// startBinary starts bin with args in dir and returns the address the node
// says it listens on; the node is stopped when the test ends.
func startBinary(t *testing.T, dir, bin string, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "HERALD_SHUTDOWN_DRAIN_WINDOW=10ms"), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	listening := regexp.MustCompile(`msg="herald listening" address=(\S+)`)
	found := make(chan string, 1)
	go func() {
		var seen strings.Builder
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			seen.WriteString(sc.Text() + "\n")
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				_, _ = io.Copy(io.Discard, stderr)
				return
			}
		}
		found <- "exited:\n" + seen.String()
	}()
	select {
	case addr := <-found:
		if strings.HasPrefix(addr, "exited:") {
			t.Fatalf("%s %v did not start: %s", bin, args, addr)
		}
		return addr
	case <-time.After(30 * time.Second):
		t.Fatalf("%s %v: no listening line in 30s", bin, args)
	}
	return ""
}

// TestCentrifugoFlagsOverEnvironment: a flag replaces the variable of its
// key, and a flag not given leaves the environment alone.
func TestCentrifugoFlagsOverEnvironment(t *testing.T) {
	fs := pflag.NewFlagSet("centrifugo", pflag.ContinueOnError)
	addCentrifugoFlags(fs)
	if err := fs.Parse([]string{"-p", "9000", "--client.insecure"}); err != nil {
		t.Fatal(err)
	}
	env, names := centrifugoFlagEnv(fs, []string{"CENTRIFUGO_HTTP_SERVER_PORT=1", "CENTRIFUGO_LOG_LEVEL=debug", "PATH=/bin"})
	want := []string{"CENTRIFUGO_LOG_LEVEL=debug", "PATH=/bin", "CENTRIFUGO_HTTP_SERVER_PORT=9000", "CENTRIFUGO_CLIENT_INSECURE=true"}
	if strings.Join(env, " ") != strings.Join(want, " ") {
		t.Errorf("environment %q, want %q", env, want)
	}
	if names["CENTRIFUGO_HTTP_SERVER_PORT"] != "--http_server.port" {
		t.Errorf("flag names %v", names)
	}
	if err := flagNames(errors.New("x: bad (set by CENTRIFUGO_HTTP_SERVER_PORT)"), names); err.Error() != "x: bad (set by --http_server.port)" {
		t.Errorf("flagNames: %v", err)
	}
}

// TestCentrifugoName: the binary is Centrifugo's command line under the
// name centrifugo only.
func TestCentrifugoName(t *testing.T) {
	for arg0, want := range map[string]bool{
		"centrifugo": true, "/usr/local/bin/centrifugo": true, "centrifugo.exe": true,
		"herald": false, "./centrifugo-old": false, "/bin/herald": false,
	} {
		if got := isCentrifugoName(arg0); got != want {
			t.Errorf("isCentrifugoName(%q) = %v", arg0, got)
		}
	}
}

// TestCentrifugoArgs: `herald centrifugo ARGS`, what a compose command
// becomes with the image's entrypoint, is Centrifugo's command line too.
func TestCentrifugoArgs(t *testing.T) {
	for _, c := range []struct {
		osArgs []string
		want   string
		ok     bool
	}{
		{[]string{"/usr/local/bin/centrifugo", "-c", "config.json"}, "-c config.json", true},
		{[]string{"/herald", "centrifugo", "gentoken", "-u", "42"}, "gentoken -u 42", true},
		{[]string{"/herald", "centrifugo"}, "", true},
		{[]string{"/herald", "serve", "centrifugo"}, "", false},
		{[]string{"herald"}, "", false},
	} {
		got, ok := centrifugoArgs(c.osArgs)
		if ok != c.ok || strings.Join(got, " ") != c.want || (ok && got == nil) {
			t.Errorf("centrifugoArgs(%q) = %q, %v", c.osArgs, got, ok)
		}
	}
}

// centrifugoFlagTable is the flag table of docs/cli-centrifugo.md, made
// from the flag list.
func centrifugoFlagTable() string {
	var b strings.Builder
	b.WriteString("| flag | short | Centrifugo's default | meaning |\n|---|---|---|---|\n")
	for _, f := range centrifugoFlags {
		short, def := "", f.def
		if f.short != "" {
			short = "`-" + f.short + "`"
		}
		if f.boolean {
			def = "false"
		}
		if def != "" {
			def = "`" + def + "`"
		}
		b.WriteString("| `--" + f.key + "` | " + short + " | " + def + " | " + f.usage + " |\n")
	}
	return b.String()
}

// TestCentrifugoCLIDocs: docs/cli-centrifugo.md lists every flag as the
// code declares it, and every subcommand of the centrifugo name.
func TestCentrifugoCLIDocs(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli-centrifugo.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	if table := centrifugoFlagTable(); !strings.Contains(doc, table) {
		t.Errorf("docs/cli-centrifugo.md: the flag table is not the code's; want:\n%s", table)
	}
	for _, c := range centrifugoRoot().Commands() {
		if !strings.Contains(doc, "`"+c.Name()+"`") && c.Name() != "help" && c.Name() != "completion" {
			t.Errorf("docs/cli-centrifugo.md does not describe %s", c.Name())
		}
	}
}
