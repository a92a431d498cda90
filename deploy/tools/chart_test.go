package tools_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/server"
)

const chartDir = "../helm/herald"

// render runs what `helm template` runs, with ci/test-values.yaml and then
// the overrides, and returns the manifests.
func render(t *testing.T, overrides map[string]any) (string, error) {
	t.Helper()
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := chartutil.ReadValuesFile(filepath.Join(chartDir, "ci", "test-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	vals = chartutil.CoalesceTables(overrides, vals)
	install := action.NewInstall(&action.Configuration{})
	install.DryRun, install.ClientOnly, install.Replace = true, true, true
	install.ReleaseName, install.Namespace = "herald", "realtime"
	install.KubeVersion = &chartutil.KubeVersion{Version: "v1.32.0", Major: "1", Minor: "32"}
	rel, err := install.RunWithContext(context.Background(), chrt, vals)
	if err != nil {
		return "", err
	}
	return rel.Manifest, nil
}

// objects are the rendered chart's resources, decoded strictly into the
// Kubernetes API's own types.
type objects struct {
	deployment *appsv1.Deployment
	service    *corev1.Service
	configMap  *corev1.ConfigMap
	secret     *corev1.Secret
	pdb        *policyv1.PodDisruptionBudget
	hpa        *autoscalingv2.HorizontalPodAutoscaler
	monitor    map[string]any
}

// decode checks every manifest against the Kubernetes schema (the OpenAPI
// types client-go ships for server-side apply: unknown fields and wrong
// types fail) and decodes it with unknown fields refused.
func decode(t *testing.T, manifest string) objects {
	t.Helper()
	tc := applyconfigurations.NewTypeConverter(scheme.Scheme)
	var o objects
	for _, doc := range strings.Split(manifest, "\n---\n") {
		if strings.TrimSpace(strings.TrimPrefix(doc, "---")) == "" {
			continue
		}
		var u unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		kind := u.GetKind()
		if kind == "ServiceMonitor" {
			// A CRD of the Prometheus Operator: not in client-go's schema.
			o.monitor = u.Object
			continue
		}
		if _, err := tc.ObjectToTyped(&u); err != nil {
			t.Errorf("%s %s: not valid for the Kubernetes schema: %v", kind, u.GetName(), err)
		}
		var dst any
		switch kind {
		case "Deployment":
			o.deployment = &appsv1.Deployment{}
			dst = o.deployment
		case "Service":
			o.service = &corev1.Service{}
			dst = o.service
		case "ConfigMap":
			o.configMap = &corev1.ConfigMap{}
			dst = o.configMap
		case "Secret":
			o.secret = &corev1.Secret{}
			dst = o.secret
		case "PodDisruptionBudget":
			o.pdb = &policyv1.PodDisruptionBudget{}
			dst = o.pdb
		case "HorizontalPodAutoscaler":
			o.hpa = &autoscalingv2.HorizontalPodAutoscaler{}
			dst = o.hpa
		default:
			t.Errorf("unexpected kind %s", kind)
			continue
		}
		if err := yaml.UnmarshalStrict([]byte(doc), dst); err != nil {
			t.Errorf("%s: %v", kind, err)
		}
	}
	return o
}

// TestChartRenders renders the chart with every piece on and checks each
// resource against the Kubernetes schema and against each other.
func TestChartRenders(t *testing.T) {
	manifest, err := render(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := decode(t, manifest)
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	// The image tag defaults to appVersion: the version the image's label
	// and herald version name.
	if chrt.Metadata.AppVersion != server.Version {
		t.Errorf("Chart.yaml appVersion %q, Herald is %s", chrt.Metadata.AppVersion, server.Version)
	}
	if o.deployment == nil || o.service == nil || o.configMap == nil || o.secret == nil || o.pdb == nil || o.hpa == nil || o.monitor == nil {
		t.Fatalf("missing resources: %+v", o)
	}
	pod := o.deployment.Spec.Template.Spec
	if sc := pod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser != 65532 {
		t.Errorf("pod security context %+v: want runAsNonRoot as the image's user 65532", sc)
	}
	if o.hpa.Spec.ScaleTargetRef.Name != o.deployment.Name {
		t.Errorf("HPA targets %s, the Deployment is %s", o.hpa.Spec.ScaleTargetRef.Name, o.deployment.Name)
	}
	if o.deployment.Spec.Replicas != nil {
		t.Error("replicas set while the HPA owns them")
	}
	for name, sel := range map[string]map[string]string{"Service": o.service.Spec.Selector, "PDB": o.pdb.Spec.Selector.MatchLabels} {
		for k, v := range sel {
			if o.deployment.Spec.Template.Labels[k] != v {
				t.Errorf("%s selects %s=%s; the pods do not have it", name, k, v)
			}
		}
	}
	endpoints, _ := o.monitor["spec"].(map[string]any)["endpoints"].([]any)
	if len(endpoints) != 1 || endpoints[0].(map[string]any)["port"] != "http" || endpoints[0].(map[string]any)["path"] != "/metrics" {
		t.Errorf("ServiceMonitor endpoints %v: want port http, path /metrics", endpoints)
	}
}

// TestChartMetricsPath: the ServiceMonitor scrapes the path the node
// serves its metrics at, config.prometheus.handler_prefix.
func TestChartMetricsPath(t *testing.T) {
	manifest, err := render(t, map[string]any{
		"serviceMonitor": map[string]any{"enabled": true},
		"config":         map[string]any{"prometheus": map[string]any{"handler_prefix": "/internal/metrics/"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	o := decode(t, manifest)
	if o.monitor == nil {
		t.Fatal("no ServiceMonitor")
	}
	endpoints, _ := o.monitor["spec"].(map[string]any)["endpoints"].([]any)
	if len(endpoints) != 1 || endpoints[0].(map[string]any)["path"] != "/internal/metrics" {
		t.Errorf("ServiceMonitor endpoints %v: want path /internal/metrics", endpoints)
	}
}

// TestChartRefuses checks that values Herald or a cluster cannot run with
// fail the render with a message naming them.
func TestChartRefuses(t *testing.T) {
	for name, c := range map[string]struct {
		values map[string]any
		want   string
	}{
		"memory engine, 3 replicas": {map[string]any{"engine": map[string]any{"type": "memory"}, "autoscaling": map[string]any{"enabled": false}}, "engine.type memory"},
		"unknown engine":            {map[string]any{"engine": map[string]any{"type": "mysql"}}, `engine.type "mysql"`},
		"drain past timeout":        {map[string]any{"shutdown": map[string]any{"drainWindowSeconds": 30, "timeoutSeconds": 30}}, "shutdown.drainWindowSeconds"},
		"no keys":                   {map[string]any{"secrets": map[string]any{"hmacSecretKey": "", "apiKey": ""}}, "secrets.hmacSecretKey"},
		"postgres without DSN":      {map[string]any{"secrets": map[string]any{"postgresDSN": ""}}, "secrets.postgresDSN"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := render(t, c.values)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// TestChartMatchesTheBinary loads the rendered ConfigMap and Secret as the
// pod would (file plus HERALD_* variables), checks Herald accepts them,
// runs a node with them (on the memory engine: the engine is not what is
// under test) and checks the probes against it: their paths answer 200 on
// the port the node listens on, /readyz turns 503 once the drain starts,
// and the drain and the whole shutdown fit in the pod's grace period after
// the preStop sleep.
func TestChartMatchesTheBinary(t *testing.T) {
	// A short drain, to keep the test quick; the arithmetic is the same.
	manifest, err := render(t, map[string]any{"shutdown": map[string]any{"drainWindowSeconds": 1, "timeoutSeconds": 10, "preStopSleepSeconds": 3}})
	if err != nil {
		t.Fatal(err)
	}
	o := decode(t, manifest)
	if o.deployment == nil || o.configMap == nil || o.secret == nil {
		t.Fatal("missing resources")
	}
	pod := o.deployment.Spec.Template.Spec
	c := pod.Containers[0]

	file := filepath.Join(t.TempDir(), "herald.yaml")
	if err := os.WriteFile(file, []byte(o.configMap.Data["herald.yaml"]), 0o600); err != nil {
		t.Fatal(err)
	}
	mount := ""
	for _, m := range c.VolumeMounts {
		if m.Name == "config" {
			mount = m.MountPath
		}
	}
	if want := []string{"serve", "--config", filepath.Join(mount, "herald.yaml")}; strings.Join(c.Args, " ") != strings.Join(want, " ") {
		t.Errorf("args %q, want %q (the ConfigMap is mounted at %s)", c.Args, want, mount)
	}
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatalf("the rendered herald.yaml: %v", err)
	}
	var environ []string
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			if e.ValueFrom.SecretKeyRef.Name != o.secret.Name {
				t.Errorf("%s reads Secret %s; the chart's is %s", e.Name, e.ValueFrom.SecretKeyRef.Name, o.secret.Name)
			}
			v, ok := o.secret.Data[e.ValueFrom.SecretKeyRef.Key]
			if !ok {
				if opt := e.ValueFrom.SecretKeyRef.Optional; opt == nil || !*opt {
					t.Errorf("%s: the Secret has no key %s", e.Name, e.ValueFrom.SecretKeyRef.Key)
				}
				continue
			}
			environ = append(environ, e.Name+"="+string(v))
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil:
			environ = append(environ, e.Name+"=herald-0")
		default:
			environ = append(environ, e.Name+"="+e.Value)
		}
	}
	unknown, err := config.ApplyEnv(&cfg, environ)
	if err != nil || len(unknown) > 0 {
		t.Fatalf("the pod's environment: %v, naming no key: %v", err, unknown)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Herald refuses the chart's configuration: %v", err)
	}
	if cfg.Engine.Type != "postgres" || cfg.Engine.Postgres.DSN == "" || cfg.Client.Token.HMACSecretKey == "" || cfg.HTTPAPI.Key == "" {
		t.Errorf("engine %q dsn %q, keys %q %q: the Secret did not reach the configuration", cfg.Engine.Type, cfg.Engine.Postgres.DSN, cfg.Client.Token.HMACSecretKey, cfg.HTTPAPI.Key)
	}

	// The probes name a container port; the node listens on it.
	_, port, err := net.SplitHostPort(cfg.Address)
	if err != nil {
		t.Fatal(err)
	}
	portOf := func(name string) string {
		for _, p := range c.Ports {
			if p.Name == name {
				return strconv.Itoa(int(p.ContainerPort))
			}
		}
		return ""
	}
	probes := map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe}
	paths := map[string]string{"readiness": "/readyz", "liveness": "/healthz"}
	for name, p := range probes {
		if p == nil || p.HTTPGet == nil {
			t.Fatalf("%s probe: want an httpGet", name)
		}
		if p.HTTPGet.Path != paths[name] {
			t.Errorf("%s probe path %s, want %s", name, p.HTTPGet.Path, paths[name])
		}
		if got := portOf(p.HTTPGet.Port.String()); got != port {
			t.Errorf("%s probe port %s is container port %q; Herald listens on %s", name, p.HTTPGet.Port.String(), got, port)
		}
	}
	if got := o.service.Spec.Ports[0].TargetPort.String(); portOf(got) != port {
		t.Errorf("Service targets %s; Herald listens on %s", got, port)
	}

	// Run the node, on loopback and the memory engine.
	cfg.Address = "127.0.0.1:0"
	cfg.Engine.Type = "memory"
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	base := "http://" + srv.Addr()
	for name, p := range probes {
		if code := get(t, base+p.HTTPGet.Path); code != http.StatusOK {
			t.Errorf("%s probe %s: %d from a running node", name, p.HTTPGet.Path, code)
		}
	}

	// Clients, to watch the drain close them: the drain spreads their
	// closes over drain_window (one client alone is closed at once).
	signer, err := auth.NewHMACSigner(cfg.Client.Token.HMACSecretKey, "HS256")
	if err != nil {
		t.Fatal(err)
	}
	token, err := signer.ConnectToken(auth.ConnectClaims{User: "u1"})
	if err != nil {
		t.Fatal(err)
	}
	const clients = 10
	conns := make([]*gws.Conn, clients)
	for i := range conns {
		conn, _, err := gws.DefaultDialer.Dial("ws://"+srv.Addr()+server.WebSocketPath, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		if err := conn.WriteMessage(gws.TextMessage, []byte(`{"id":1,"connect":{"token":"`+token+`"}}`)); err != nil {
			t.Fatal(err)
		}
		if _, reply, err := conn.ReadMessage(); err != nil || !strings.Contains(string(reply), `"client"`) {
			t.Fatalf("connect: %s %v", reply, err)
		}
		conns[i] = conn
	}
	closed := make(chan error, clients)
	for _, conn := range conns {
		go func() {
			_, _, err := conn.ReadMessage()
			closed <- err
		}()
	}

	// SIGTERM's effect: Shutdown.
	start := time.Now()
	shutdown := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), cfg.Shutdown.Timeout)
		defer cancel()
		shutdown <- srv.Shutdown(ctx)
	}()
	// The readiness probe fails from the drain's start, so the endpoint
	// goes even where the preStop sleep was cut short.
	for code := get(t, base+"/readyz"); code != http.StatusServiceUnavailable; code = get(t, base+"/readyz") {
		if code != http.StatusOK {
			t.Fatalf("/readyz answered %d during the drain, want 503", code)
		}
	}
	for range clients {
		var ce *gws.CloseError
		if err := <-closed; !errors.As(err, &ce) || ce.Code != 3001 {
			t.Errorf("client: %v, want close 3001 (shutdown)", err)
		}
	}
	drained := time.Since(start)
	if err := <-shutdown; err != nil {
		t.Errorf("shutdown: %v", err)
	}
	took := time.Since(start)
	if drained > cfg.Shutdown.DrainWindow+time.Second {
		t.Errorf("the clients were closed over %s; drain_window is %s", drained, cfg.Shutdown.DrainWindow)
	}

	grace := time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second
	preStop := c.Lifecycle.PreStop
	if preStop == nil || preStop.Sleep == nil {
		t.Fatal("no preStop sleep")
	}
	sleep := time.Duration(preStop.Sleep.Seconds) * time.Second
	if sleep+cfg.Shutdown.Timeout >= grace {
		t.Errorf("terminationGracePeriodSeconds %s <= preStop %s + shutdown.timeout %s: the kubelet kills a node still draining", grace, sleep, cfg.Shutdown.Timeout)
	}
	if took > cfg.Shutdown.Timeout || sleep+took >= grace {
		t.Errorf("shutdown took %s; shutdown.timeout %s, grace %s after a preStop of %s", took, cfg.Shutdown.Timeout, grace, sleep)
	}
}

// get returns the status of GET url, or 0 when no answer came (the
// listener closed).
func get(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Logf("GET %s: %v", url, err)
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestChartTLSAndTracing: with a TLS Secret named, the node's file serves
// TLS from the Secret's mounted files, the probes and the ServiceMonitor
// ask over HTTPS, and the Secret is mounted where the file points; with
// tracing on, the file turns it on and the OTLP endpoint reaches the pod.
func TestChartTLSAndTracing(t *testing.T) {
	manifest, err := render(t, map[string]any{
		"tls":     map[string]any{"secretName": "herald-tls"},
		"tracing": map[string]any{"enabled": true, "otlpEndpoint": "http://collector:4318"},
	})
	if err != nil {
		t.Fatal(err)
	}
	o := decode(t, manifest)
	var file struct {
		TLS struct {
			CertFile string `json:"cert_file"`
			KeyFile  string `json:"key_file"`
		} `json:"tls"`
		OpenTelemetry struct {
			Enabled bool `json:"enabled"`
		} `json:"opentelemetry"`
	}
	if err := yaml.Unmarshal([]byte(o.configMap.Data["herald.yaml"]), &file); err != nil {
		t.Fatal(err)
	}
	if file.TLS.CertFile != "/etc/herald-tls/tls.crt" || file.TLS.KeyFile != "/etc/herald-tls/tls.key" || !file.OpenTelemetry.Enabled {
		t.Fatalf("herald.yaml %+v: want tls from /etc/herald-tls and opentelemetry on", file)
	}
	pod := o.deployment.Spec.Template.Spec
	c := pod.Containers[0]
	if c.ReadinessProbe.HTTPGet.Scheme != corev1.URISchemeHTTPS || c.LivenessProbe.HTTPGet.Scheme != corev1.URISchemeHTTPS {
		t.Errorf("probes ask over %s and %s, want HTTPS", c.ReadinessProbe.HTTPGet.Scheme, c.LivenessProbe.HTTPGet.Scheme)
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			if m.Name == v.Name && m.MountPath == "/etc/herald-tls" && v.Secret != nil && v.Secret.SecretName == "herald-tls" {
				mounted = true
			}
		}
	}
	if !mounted {
		t.Error("the TLS Secret is not mounted at /etc/herald-tls")
	}
	endpoint := false
	for _, e := range c.Env {
		endpoint = endpoint || (e.Name == "OTEL_EXPORTER_OTLP_ENDPOINT" && e.Value == "http://collector:4318")
	}
	if !endpoint {
		t.Error("OTEL_EXPORTER_OTLP_ENDPOINT not set")
	}
	ep := o.monitor["spec"].(map[string]any)["endpoints"].([]any)[0].(map[string]any)
	if ep["scheme"] != "https" {
		t.Errorf("ServiceMonitor endpoint %v: want scheme https", ep)
	}
}
