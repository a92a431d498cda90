//go:build linux

package deploy_test

import (
	"context"
	"debug/elf"
	"encoding/json"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/heraldhq/herald/server"
)

// imageConfig is the part of `buildah inspect --type image` the test reads:
// the Docker-format config (the one with the health check).
type imageConfig struct {
	Docker struct {
		Config struct {
			User        string
			Entrypoint  []string
			Cmd         []string
			Volumes     map[string]struct{}
			Labels      map[string]string
			Healthcheck *struct{ Test []string }
		} `json:"config"`
	}
}

// TestImage checks the container image deploy/image/build.sh made, from
// its mounted root filesystem (HERALD_TEST_IMAGE_ROOTFS) and its config
// (HERALD_TEST_IMAGE_INSPECT, buildah inspect's JSON): only the binary and
// the CA bundle, a static binary, a numeric non-root user, the health
// check and labels, and an entrypoint that serves a client. test.sh's
// "image" step builds the image and runs this; elsewhere it skips.
func TestImage(t *testing.T) {
	rootfs, inspect := os.Getenv("HERALD_TEST_IMAGE_ROOTFS"), os.Getenv("HERALD_TEST_IMAGE_INSPECT")
	if rootfs == "" || inspect == "" {
		t.Skip("HERALD_TEST_IMAGE_ROOTFS and HERALD_TEST_IMAGE_INSPECT are not set (scripts/test.sh's image step sets them)")
	}
	raw, err := os.ReadFile(inspect)
	if err != nil {
		t.Fatal(err)
	}
	var img imageConfig
	if err := json.Unmarshal(raw, &img); err != nil {
		t.Fatalf("%s: %v", inspect, err)
	}
	cfg := img.Docker.Config

	t.Run("files", func(t *testing.T) {
		var files, dirs []string
		err := filepath.WalkDir(rootfs, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(rootfs, p)
			switch {
			case rel == ".":
			case d.IsDir():
				dirs = append(dirs, rel)
			case d.Type().IsRegular():
				files = append(files, rel)
			case rel == "usr/local/bin/centrifugo" && d.Type() == fs.ModeSymlink:
				// The binary's second name, Centrifugo's command line.
				if target, err := os.Readlink(p); err != nil || target != "/herald" {
					t.Errorf("%s: links to %q (%v), want /herald", rel, target, err)
				}
			default:
				t.Errorf("%s: a %s; the image holds only regular files and directories", rel, d.Type())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(files)
		if want := []string{"etc/ssl/certs/ca-certificates.crt", "herald"}; !slices.Equal(files, want) {
			t.Errorf("files %q, want only %q", files, want)
		}
		slices.Sort(dirs)
		if want := []string{"centrifugo", "etc", "etc/ssl", "etc/ssl/certs", "usr", "usr/local", "usr/local/bin", "var", "var/lib", "var/lib/herald"}; !slices.Equal(dirs, want) {
			t.Errorf("directories %q, want %q", dirs, want)
		}
		bin, err := elf.Open(filepath.Join(rootfs, "herald"))
		if err != nil {
			t.Fatal(err)
		}
		defer bin.Close()
		for _, p := range bin.Progs {
			if p.Type == elf.PT_INTERP {
				t.Error("herald is dynamically linked (it has an ELF interpreter); scratch has no libc")
			}
		}
		ca, err := os.ReadFile(filepath.Join(rootfs, "etc/ssl/certs/ca-certificates.crt"))
		if err != nil || !strings.Contains(string(ca), "BEGIN CERTIFICATE") {
			t.Errorf("CA bundle: %v, no certificate in it", err)
		}
	})

	t.Run("config", func(t *testing.T) {
		uid, gid, ok := strings.Cut(cfg.User, ":")
		if n, err := strconv.Atoi(uid); !ok || err != nil || n == 0 {
			t.Errorf("user %q: want a numeric, non-root uid:gid (runAsNonRoot can only check a number)", cfg.User)
		} else if st, err := os.Stat(filepath.Join(rootfs, "var/lib/herald")); err != nil {
			t.Error(err)
		} else if sys := st.Sys().(*syscall.Stat_t); strconv.Itoa(int(sys.Uid)) != uid || strconv.Itoa(int(sys.Gid)) != gid {
			t.Errorf("/var/lib/herald is owned by %d:%d; the image's user %s cannot write its data volume", sys.Uid, sys.Gid, cfg.User)
		}
		if _, ok := cfg.Volumes["/var/lib/herald"]; !ok {
			t.Errorf("volumes %v: want /var/lib/herald", cfg.Volumes)
		}
		if !slices.Equal(cfg.Entrypoint, []string{"/herald"}) || len(cfg.Cmd) == 0 || cfg.Cmd[0] != "serve" {
			t.Errorf("entrypoint %q cmd %q: want /herald serve", cfg.Entrypoint, cfg.Cmd)
		}
		if cfg.Healthcheck == nil || len(cfg.Healthcheck.Test) < 3 || !slices.Equal(cfg.Healthcheck.Test[:3], []string{"CMD", "/herald", "health"}) {
			t.Errorf("health check %+v: want CMD /herald health", cfg.Healthcheck)
		}
		for label, want := range map[string]string{
			"org.opencontainers.image.version": server.Version,
			"org.opencontainers.image.source":  "https://github.com/heraldhq/herald",
		} {
			if got := cfg.Labels[label]; got != want {
				t.Errorf("label %s = %q, want %q", label, got, want)
			}
		}
		if rev := cfg.Labels["org.opencontainers.image.revision"]; len(rev) < 12 {
			t.Errorf("label org.opencontainers.image.revision = %q, want the commit", rev)
		}
	})

	t.Run("entrypoint serves", func(t *testing.T) {
		if len(cfg.Entrypoint) == 0 || cfg.Healthcheck == nil || len(cfg.Healthcheck.Test) < 3 {
			t.Fatal("no entrypoint or health check to run")
		}
		bin := filepath.Join(rootfs, cfg.Entrypoint[0])
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		// The commit the build passed through -ldflags is the one the
		// image's label names.
		out, err := exec.CommandContext(ctx, bin, "version").Output()
		rev := cfg.Labels["org.opencontainers.image.revision"]
		if err != nil || len(rev) < 12 || !strings.Contains(string(out), "commit "+rev[:12]) {
			t.Errorf("herald version: %q %v; want commit %.12s", out, err, rev)
		}

		addr := freeAddr(t)
		conf := filepath.Join(t.TempDir(), "herald.yaml")
		if err := os.WriteFile(conf, []byte("address: "+addr+"\nclient: {insecure: true}\nshutdown: {drain_window: 100ms}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		// The image's own command, with the config at a path of this test.
		args := slices.Clone(cfg.Cmd)
		for i := range args {
			if args[i] == "/etc/herald/herald.yaml" {
				args[i] = conf
			}
		}
		node := exec.CommandContext(ctx, bin, args...)
		stderr, err := node.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := node.Start(); err != nil {
			t.Fatal(err)
		}
		logs := make(chan string, 1)
		go func() {
			b, _ := io.ReadAll(stderr)
			logs <- string(b)
		}()
		exited := false
		t.Cleanup(func() {
			if !exited {
				_ = node.Process.Kill()
				_ = node.Wait()
			}
		})

		// The image's health check, as the runtime would run it, until
		// the node listens.
		health := slices.Clone(cfg.Healthcheck.Test[2:])
		for i := range health {
			if health[i] == "/etc/herald/herald.yaml" {
				health[i] = conf
			}
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			out, err := exec.CommandContext(ctx, bin, health...).CombinedOutput()
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("health check never passed: %s %v", out, err)
			}
			time.Sleep(100 * time.Millisecond)
		}

		conn, _, err := gws.DefaultDialer.DialContext(ctx, "ws://"+addr+server.WebSocketPath, nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		if err := conn.WriteMessage(gws.TextMessage, []byte(`{"id":1,"connect":{}}`)); err != nil {
			t.Fatal(err)
		}
		_, reply, err := conn.ReadMessage()
		if err != nil || !strings.Contains(string(reply), `"id":1,"connect":{"client":`) {
			t.Fatalf("connect reply %s %v", reply, err)
		}
		conn.Close()

		if err := node.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		err = node.Wait()
		exited = true
		if err != nil {
			t.Errorf("herald exited with %v after SIGTERM; log:\n%s", err, <-logs)
		}
	})
}

// freeAddr is a loopback address nothing listens on, for a process that
// takes a fixed port.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
