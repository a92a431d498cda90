package server

import "net/http"

// h2cProtocols are the main listener's protocols with http.h2c_external:
// HTTP/1.1 and HTTP/2 without TLS, as Centrifugo's h2c_external sets them
// (v6.9.1 internal/app/mux.go).
func h2cProtocols() *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return p
}
