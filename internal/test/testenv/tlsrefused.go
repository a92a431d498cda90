package testenv

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/test/testcerts"
	"github.com/heraldhq/herald/internal/tlsfiles"
)

// RequireTLSRefused checks that a server which requires client
// certificates refuses a client made by connect from good changed three
// ways: trusting another CA, expecting the server name wrongName, and
// holding no client certificate. Each refusal's error must contain what
// it names: the unknown authority, wrongName, and noCertWant (what the
// client's own error says when the server drops it, such as
// "redis engine: ping").
func RequireTLSRefused(t *testing.T, good tlsfiles.Files, wrongName, noCertWant string, connect func(context.Context, tlsfiles.Files) (io.Closer, error)) {
	t.Helper()
	noCert := good
	noCert.CertFile, noCert.KeyFile = "", ""
	otherCA := good
	otherCA.CAFile = testcerts.NewCA(t, "herald-test").File
	badName := good
	badName.ServerName = wrongName
	for _, c := range []struct {
		name string
		f    tlsfiles.Files
		want string
	}{
		{"another CA", otherCA, "certificate signed by unknown authority"},
		{"wrong server name", badName, wrongName},
		{"no client certificate", noCert, noCertWant},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			e, err := connect(ctx, c.f)
			if err == nil {
				_ = e.Close()
				t.Fatal("connected")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q, want it to contain %q", err, c.want)
			}
		})
	}
}
