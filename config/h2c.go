package config

// h2cProblems checks http.h2c_external for Validate: Centrifugo refuses it
// without a separate internal listener, and with TLS on the main one
// (v6.9.1 internal/config/validate.go).
func (c Config) h2cProblems() Problems {
	switch {
	case !c.HTTP.H2CExternal:
	case !c.InternalEnabled():
		return Problems{{Key: "http.h2c_external", Message: "needs internal.address: a separate internal listener, as in Centrifugo"}}
	case c.TLSEnabled():
		return Problems{{Key: "http.h2c_external", Message: "not with TLS on the main listener (tls, tls_autocert): HTTP/2 over TLS is served there already"}}
	}
	return nil
}
