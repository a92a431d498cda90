package hub

import (
	"time"

	"github.com/heraldhq/herald/hub/internal/access"
)

// UserAccess is this node's copy of the cluster's block and token
// invalidation records for one user (the admin inspector shows it).
type UserAccess = access.UserState

// UserAccess returns what this node holds about user's block and token
// invalidation; every node holds the same once changes have spread.
func (h *Hub) UserAccess(user string) UserAccess {
	return h.access.User(user, time.Now())
}
