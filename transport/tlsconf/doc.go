// Package tlsconf builds the TLS configuration of Herald's listeners from
// certificate and key files, or PEM text given inline (read once): the
// minimum version and cipher policy, an optional client-certificate check
// against a CA, and reloading of the files without a restart (when their modification time changes, or on
// Reload, which `herald serve` calls on SIGHUP). Autocert does the same
// with certificates obtained over ACME.
//
// It is independent of the rest of Herald, so an embedding application can
// serve its own listeners (a gRPC server, say) with the same files and
// policy: tlsconf.New(cfg, log) and then Files.TLSConfig("h2").
package tlsconf
