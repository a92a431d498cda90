package tracing_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/heraldhq/herald/tracing"
)

// TestProviderGoogleCloudADC: with WithGoogleCloudADC the HTTP exporter
// gets a token for the service account that GOOGLE_APPLICATION_CREDENTIALS
// names (from its token_uri, a loopback server here) and sends it as a
// bearer token with the spans.
func TestProviderGoogleCloudADC(t *testing.T) {
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "adc-token", "token_type": "Bearer", "expires_in": 3600})
	}))
	defer tokens.Close()
	auth := make(chan string, 16)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case auth <- r.Header.Get("Authorization"):
		default:
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	sa, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "p", "private_key_id": "k1", "private_key": string(pemKey),
		"client_email": "herald@p.iam.gserviceaccount.com", "client_id": "1", "token_uri": tokens.URL,
	})
	file := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(file, sa, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", file)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", tracing.ProtocolHTTP)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20")

	tp, err := tracing.NewProvider(context.Background(), "1.2.3", tracing.WithGoogleCloudADC())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tp.Shutdown(ctx)
		tokens.CloseClientConnections()
		collector.CloseClientConnections()
	}()
	_, span := tp.Tracer(tracing.Name).Start(context.Background(), "s")
	span.End()
	select {
	case got := <-auth:
		if got != "Bearer adc-token" {
			t.Fatalf("Authorization %q, want the ADC token", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no export reached the collector")
	}
}
