// Package admin serves Herald's admin web UI and the JSON API behind it:
// a cluster overview, channels with presence, history and a live tail,
// connections, every server API method, and charts. The pages are plain
// HTML, CSS and JavaScript embedded in the binary (ui/), so the UI works
// offline and needs no build step.
//
// Access needs a login: log in with the admin password or a signed
// admin token (an HMAC JWT with "admin": true). The login is an
// HttpOnly, SameSite=Strict cookie (Secure over TLS), and every
// state-changing request must also carry the login's CSRF token in the
// X-Herald-CSRF header. Login attempts are rate-limited per client IP.
// Logins live in the memory of the node that issued them.
package admin
