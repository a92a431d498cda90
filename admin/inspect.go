package admin

import (
	"net/http"

	"github.com/heraldhq/herald/hub"
)

// userInspection is what the user inspector needs beyond the server API
// (connections and get_user_status, which the page calls itself): the
// node's block and token invalidation records of the user.
type userInspection struct {
	User   string         `json:"user"`
	Node   string         `json:"node"`
	Access hub.UserAccess `json:"access"`
}

func (a *Handler) inspectUser(w http.ResponseWriter, r *http.Request) {
	user := r.URL.Query().Get("user")
	if user == "" {
		writeError(w, http.StatusBadRequest, "user is required")
		return
	}
	writeJSON(w, http.StatusOK, userInspection{User: user, Node: a.hub.NodeID(), Access: a.hub.UserAccess(user)})
}
