package stateoutput

import (
	"encoding/json"
	"strconv"
)

// eventJSON is an event as the queue outputs send it: the state proxy's
// event object ({"channel", "type", "time_ms"}), so that a backend reads
// one shape whichever way the events come.
type eventJSON struct {
	Channel string `json:"channel"`
	Type    string `json:"type"`
	TimeMs  int64  `json:"time_ms"`
}

// marshalEvent is e as JSON.
func marshalEvent(e Event) ([]byte, error) {
	return json.Marshal(eventJSON{Channel: e.Channel, Type: e.Type, TimeMs: e.TimeMs})
}

// eventID names e among every event: channel:type:time_ms (time_ms is
// strictly greater than the channel's previous event's, the type only
// makes the name readable). A channel name may hold ':' but the id is
// read only as a whole.
func eventID(e Event) string {
	return e.Channel + ":" + e.Type + ":" + strconv.FormatInt(e.TimeMs, 10)
}
