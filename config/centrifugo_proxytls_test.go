package config

import "testing"

// A proxy's http.tls becomes its tls, from every format and from the
// client.proxy sections alike; off, it is not used, as in Centrifugo.
func TestCentrifugoProxyHTTPTLS(t *testing.T) {
	files := map[string]string{
		"c.json": `{"proxies": [{"name": "p", "endpoint": "https://backend:8443/rpc", "http": {"tls": {"enabled": true, "server_ca_pem": "/etc/ca.pem", "server_name": "backend.internal"}}},
			{"name": "off", "endpoint": "https://backend:8443/x", "http": {"tls": {"enabled": false, "server_name": "ignored"}}}],
			"client": {"proxy": {"connect": {"enabled": true, "endpoint": "https://backend:8443/c", "http": {"tls": {"enabled": true, "cert_pem": "/etc/c.pem", "key_pem": "/etc/k.pem", "insecure_skip_verify": true}}}}}}`,
		"c.yaml": "proxies:\n  - name: p\n    endpoint: https://backend:8443/rpc\n    http: {tls: {enabled: true, server_ca_pem: /etc/ca.pem, server_name: backend.internal}}\n" +
			"  - name: \"off\"\n    endpoint: https://backend:8443/x\n    http: {tls: {enabled: false, server_name: ignored}}\n" +
			"client:\n  proxy:\n    connect:\n      enabled: true\n      endpoint: https://backend:8443/c\n      http: {tls: {enabled: true, cert_pem: /etc/c.pem, key_pem: /etc/k.pem, insecure_skip_verify: true}}\n",
		"c.toml": "[[proxies]]\nname = \"p\"\nendpoint = \"https://backend:8443/rpc\"\n[proxies.http.tls]\nenabled = true\nserver_ca_pem = \"/etc/ca.pem\"\nserver_name = \"backend.internal\"\n" +
			"[[proxies]]\nname = \"off\"\nendpoint = \"https://backend:8443/x\"\n[proxies.http.tls]\nenabled = false\nserver_name = \"ignored\"\n" +
			"[client.proxy.connect]\nenabled = true\nendpoint = \"https://backend:8443/c\"\n[client.proxy.connect.http.tls]\nenabled = true\ncert_pem = \"/etc/c.pem\"\nkey_pem = \"/etc/k.pem\"\ninsecure_skip_verify = true\n",
	}
	for name, text := range files {
		cfg, err := ParseCentrifugo([]byte(text), name, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := map[string]ClientTLSFiles{}
		for _, p := range cfg.Proxies {
			got[p.Name] = p.TLSFiles
		}
		if f := got["p"]; f.CAFile != "/etc/ca.pem" || f.ServerName != "backend.internal" {
			t.Errorf("%s: proxy p tls %+v", name, f)
		}
		if f := got["off"]; f != (ClientTLSFiles{}) {
			t.Errorf("%s: a disabled http.tls was used: %+v", name, f)
		}
		if f := got["client.proxy.connect"]; f.CertFile != "/etc/c.pem" || f.KeyFile != "/etc/k.pem" || !f.InsecureSkipVerify {
			t.Errorf("%s: connect proxy tls %+v", name, f)
		}
	}
}
