package auth

import "errors"

// errCritical refuses a token with a "crit" header.
var errCritical = errors.New(`"crit" header: this server understands no JWS extensions, so it must refuse a token that marks any as critical (RFC 7515 section 4.1.11)`)

// CheckCritical refuses a JOSE header with a "crit" parameter. RFC 7515
// requires rejecting a JWS whose crit lists an extension the recipient
// does not understand, and Herald understands none; a crit that is empty
// or not a list is malformed, which the RFC also forbids. Every verifier
// of tokens (connection, subscription, admin) calls it.
func CheckCritical(header map[string]any) error {
	if _, ok := header["crit"]; ok {
		return errCritical
	}
	return nil
}
