package admin

import (
	"net/http"
	"regexp"
)

// methodName is what a server API method name looks like; anything else
// is refused before it reaches the API handler.
var methodName = regexp.MustCompile(`^[a-z_]{1,32}$`)

// call runs one server API method (or a batch) in process and answers
// exactly what the API answers: the raw JSON the UI shows.
func (a *Handler) call(w http.ResponseWriter, r *http.Request) {
	method := r.PathValue("method")
	if !methodName.MatchString(method) {
		writeError(w, http.StatusBadRequest, "bad method name")
		return
	}
	a.log.Info("admin API call", "method", method, "remote", r.RemoteAddr)
	in := r.Clone(r.Context())
	in.URL.Path = "/" + method
	in.URL.RawPath = ""
	in.RequestURI = ""
	// Nothing of the browser's request but the body reaches the API: not
	// its cookie, not its CSRF token.
	in.Header = http.Header{"Content-Type": {"application/json"}}
	a.api.ServeHTTP(w, in)
}
