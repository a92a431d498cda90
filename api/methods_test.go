package api

import (
	"testing"
)

// TestMethodTypesAreCentrifugos: the table's Command.MethodType numbers
// are those of Centrifugo's api.proto enum (13 is unused there).
func TestMethodTypesAreCentrifugos(t *testing.T) {
	centrifugo := []string{
		0: "publish", 1: "broadcast", 2: "unsubscribe", 3: "disconnect", 4: "presence",
		5: "presence_stats", 6: "history", 7: "history_remove", 8: "channels", 9: "info",
		10: "rpc", 11: "subscribe", 12: "refresh", 14: "connections",
		15: "update_user_status", 16: "get_user_status", 17: "delete_user_status",
		18: "block_user", 19: "unblock_user", 20: "revoke_token", 21: "invalidate_user_tokens",
		22: "device_register", 23: "device_update", 24: "device_remove", 25: "device_list",
		26: "device_topic_list", 27: "device_topic_update", 28: "user_topic_list",
		29: "user_topic_update", 30: "send_push_notification", 31: "update_push_status",
		32: "cancel_push", 33: "map_publish", 34: "map_remove", 35: "map_read_state",
		36: "map_read_stream", 37: "map_stats", 38: "map_clear", 39: "shared_poll_publish",
	}
	set := newMethodSet()
	for n, name := range centrifugo {
		m := set.byType[n]
		switch {
		case name == "" && m != nil:
			t.Errorf("number %d is unused in Centrifugo, the table gives it to %s", n, m.name)
		case name != "" && (m == nil || m.name != name):
			t.Errorf("number %d is %s in Centrifugo, the table has %v", n, name, m)
		}
	}
	if len(set.byType) != len(centrifugo)-1 {
		t.Errorf("the table numbers %d methods, Centrifugo %d", len(set.byType), len(centrifugo)-1)
	}
}

// TestMethodRows: names are unique; a row runs a method unless it is
// unavailable; its gRPC conversions take and give the row's own types.
func TestMethodRows(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range methodTable() {
		if seen[m.name] {
			t.Errorf("%s: two rows", m.name)
		}
		seen[m.name] = true
		if m.doc == "" {
			t.Errorf("%s: no doc line", m.name)
		}
		if m.unavailable != (m.run == nil) {
			t.Errorf("%s: unavailable %v, run set %v", m.name, m.unavailable, m.run != nil)
		}
		if !m.unavailable && (m.params == "" || m.result == "") {
			t.Errorf("%s: no request or result doc", m.name)
		}
		if m.pb != nil && m.pb.req != nil && (m.pb.req != m.req || m.pb.res != m.res) {
			t.Errorf("%s: gRPC conversions of %v → %v, the method takes %v → %v", m.name, m.pb.req, m.pb.res, m.req, m.res)
		}
	}
}
