// Package auth verifies and mints the connection and subscription JWTs of the
// Centrifugo client protocol (see section 4 of docs/protocol.md).
//
// Verification order is fixed so that the two sentinel errors mean something
// precise to callers that map them onto protocol codes (109 for expired,
// 3500/103 for invalid):
//
//  1. The token must be well formed, carry no "crit" header (RFC 7515
//     section 4.1.11; Herald understands no extension) and use an algorithm
//     for which a key is configured (HS* with the HMAC secret, RS* with the
//     RSA key, the one ES* matching the ECDSA key's curve, RS* and ES* with
//     the JWKS key its "kid" header names). "none" is never accepted.
//  2. The signature must verify, with the current key or, during a
//     rotation, the previous one.
//  3. Registered claims other than exp are checked by golang-jwt with its
//     defaults and no leeway: nbf in the future makes the token invalid
//     (Centrifugo reports that case as expired; Herald deliberately does not),
//     iat is not checked, aud and iss are checked only when configured
//     (exactly, or against a regular expression), and the user ID is read
//     from the configured claim instead of sub.
//  4. Herald's own claims are checked (channel claim rules, base64 fields).
//  5. Only then is exp compared with the current time, so ErrTokenExpired is
//     returned only for a token that is valid in every other respect, and a
//     forged expired token is reported as invalid.
package auth
