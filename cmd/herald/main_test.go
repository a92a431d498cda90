package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/auth"
)

func run(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := newRoot()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err = root.Execute()
	return out.String(), errOut.String(), err
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "herald.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigCheck(t *testing.T) {
	good := writeFile(t, "client:\n  token:\n    hmac_secret_key: s\nhttp_api:\n  key: k\n")
	if out, _, err := run(t, "config", "check", good); err != nil || !strings.HasSuffix(out, ": ok\n") {
		t.Errorf("good config: %q %v", out, err)
	}
	for name, c := range map[string]struct{ yaml, want string }{
		"unknown key":   {"client:\n  tokn: {}\n", `client.tokn: unknown key (did you mean "client.token"?)`},
		"bad namespace": {"client: {insecure: true}\nchannel:\n  namespaces: [{name: \"a b\"}]\n", `channel.namespaces[0].name: "a b": must match`},
		"bad poller":    {"client: {insecure: true}\nwebsocket: {poller: kqueue}\n", `websocket.poller: "kqueue": want "auto", "epoll" or "portable"`},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := run(t, "config", "check", writeFile(t, c.yaml))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want it to contain %s", err, c.want)
			}
		})
	}
}

func TestConfigExampleIsCheckable(t *testing.T) {
	out, _, err := run(t, "config", "example")
	if err != nil || !strings.Contains(out, "hmac_secret_key") {
		t.Fatalf("example: %v", err)
	}
	// As printed: it has no keys, which check (like serve) accepts with a
	// warning that serve generates them for each run.
	checkOut, checkErr, err := run(t, "config", "check", writeFile(t, out))
	if err != nil || !strings.HasSuffix(checkOut, ": ok\n") {
		t.Errorf("the example does not pass check: %q %v", checkOut, err)
	}
	if !strings.Contains(checkErr, "no keys are configured") {
		t.Errorf("check of the example: want the no-keys warning, got %q", checkErr)
	}
}

func TestConfigCheckNeedsAFile(t *testing.T) {
	_, _, err := run(t, "config", "check")
	want := "config check needs the path of a configuration file: herald config check herald.yaml"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	if _, _, err := run(t, "config", "check", "a.yaml", "b.yaml"); err == nil || !strings.Contains(err.Error(), "one configuration file, got 2") {
		t.Errorf("two files: got %v", err)
	}
}

func TestVersionFlag(t *testing.T) {
	flag, _, err := run(t, "--version")
	if err != nil {
		t.Fatal(err)
	}
	cmd, _, err := run(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	if flag != cmd || !strings.HasPrefix(flag, "herald "+versionString()[:strings.Index(versionString(), " ")]+" (commit ") {
		t.Errorf("herald --version printed %q, herald version %q", flag, cmd)
	}
}

func TestTokenMintsVerifiableTokens(t *testing.T) {
	v, err := auth.NewVerifier(auth.Config{HMACSecretKey: "s"})
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "token", "--secret", "s", "--user", "alice", "--info", `{"name":"Alice"}`)
	if err != nil {
		t.Fatal(err)
	}
	ct, err := v.VerifyConnectToken(strings.TrimSpace(out))
	if err != nil || ct.User != "alice" || string(ct.Info) != `{"name":"Alice"}` || ct.ExpireAt == 0 {
		t.Errorf("connection token: %+v %v", ct, err)
	}
	out, _, err = run(t, "token", "--secret", "s", "--user", "alice", "--channel", "$private", "--ttl", "0")
	if err != nil {
		t.Fatal(err)
	}
	st, err := v.VerifySubscribeToken(strings.TrimSpace(out))
	if err != nil || st.Channel != "$private" || st.User != "alice" || st.ExpireAt != 0 {
		t.Errorf("subscription token: %+v %v", st, err)
	}
	if _, _, err := run(t, "token", "--user", "x"); err == nil || !strings.Contains(err.Error(), "no HMAC secret") {
		t.Errorf("want a missing-secret error, got %v", err)
	}
	if _, _, err := run(t, "token", "--secret", "s", "--info", "{bad"); err == nil || !strings.Contains(err.Error(), "--info") {
		t.Errorf("want an --info error, got %v", err)
	}
}

// TestHelpNamesRealFlags: every --flag a command's help text mentions is
// one of its flags (the bench command hands its flags to herald-bench).
func TestHelpNamesRealFlags(t *testing.T) {
	flagRef := regexp.MustCompile(`--([a-z][a-z0-9-]*)`)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.DisableFlagParsing {
			return
		}
		for _, m := range flagRef.FindAllStringSubmatch(c.Short+"\n"+c.Long, -1) {
			if m[1] != "help" && m[1] != "version" && c.Flags().Lookup(m[1]) == nil && c.InheritedFlags().Lookup(m[1]) == nil {
				t.Errorf("%s: the help mentions --%s, which is not a flag", c.CommandPath(), m[1])
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot())
}
