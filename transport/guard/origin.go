package guard

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// SameOrigin accepts a request without an Origin header (not a browser)
// or whose Origin's host is the request's: the default origin check of
// the transports.
func SameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

// Origins returns an origin check that accepts what SameOrigin accepts
// and the listed origins (scheme://host[:port], a trailing slash ignored,
// any case); "*" in the list accepts every origin.
func Origins(allowed []string) func(r *http.Request) bool {
	if len(allowed) == 0 {
		return SameOrigin
	}
	in := Listed(allowed)
	return func(r *http.Request) bool { return SameOrigin(r) || in(r) }
}

// Listed returns an origin check that accepts only requests whose Origin
// is listed (as in Origins, "*" for any), for CORS on endpoints that
// browsers of the same origin reach without it. With none listed it is
// nil: no origin is accepted.
func Listed(allowed []string) func(r *http.Request) bool {
	if len(allowed) == 0 {
		return nil
	}
	if slices.Contains(allowed, "*") {
		return func(*http.Request) bool { return true }
	}
	return func(r *http.Request) bool {
		origin := r.Header.Get("Origin")
		return origin != "" && slices.ContainsFunc(allowed, func(a string) bool {
			return strings.EqualFold(strings.TrimSuffix(a, "/"), origin)
		})
	}
}
