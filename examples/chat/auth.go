package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/heraldhq/herald/hub"
)

// codeBadLogin closes a connection whose name is refused. Codes 4500–4999
// tell Centrifugo clients not to reconnect: retrying the same name would
// fail the same way.
const codeBadLogin = 4501

// namePattern is what a user name may be: short, and free of characters
// that would need escaping wherever the name is shown.
var namePattern = regexp.MustCompile(`^[\p{L}\p{N}_.-]{1,32}$`)

// connectData is what the page sends with its connect command.
type connectData struct {
	Name string `json:"name"`
}

// authenticate is the hub's OnConnecting handler: it decides who a client
// is instead of the JWT check. This demo trusts the name typed on the page;
// a real application would look up its own session cookie or token here
// (ev.Token, ev.Headers) and return the user it belongs to.
func authenticate(_ context.Context, ev hub.ConnectEvent) (hub.ConnectReply, error) {
	var d connectData
	if err := json.Unmarshal(ev.Data, &d); err != nil {
		return hub.ConnectReply{}, &hub.Disconnect{Code: codeBadLogin, Reason: `connect data must be {"name": "..."}`}
	}
	name := strings.TrimSpace(d.Name)
	if !namePattern.MatchString(name) {
		return hub.ConnectReply{}, &hub.Disconnect{Code: codeBadLogin, Reason: "a name is 1-32 letters, digits, '.', '_' or '-'"}
	}
	return hub.ConnectReply{User: name}, nil
}
