package hub

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// decodeStoredStatus reads a stored status value. get_user_status reads
// one per user asked (1,000 in a call), and encoding/json's reflection
// was a third of the node's CPU in bench/paid.sh's status rounds, for
// values this hub wrote itself: {"a":N} or {"a":N,"s":"..."}. Those
// are read directly; anything else (a state with escapes, a value
// written otherwise) goes through encoding/json, which stays the
// definition of the format.
func decodeStoredStatus(b []byte) (storedStatus, error) {
	var s storedStatus
	rest, ok := bytes.CutPrefix(b, []byte(`{"a":`))
	if ok {
		end := 0
		for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
			end++
		}
		if n, err := strconv.ParseInt(string(rest[:end]), 10, 64); err == nil && end > 0 && (rest[0] != '0' || end == 1) {
			s.Active, rest = n, rest[end:]
			if string(rest) == "}" {
				return s, nil
			}
			if state, ok := bytes.CutPrefix(rest, []byte(`,"s":"`)); ok {
				if state, ok = bytes.CutSuffix(state, []byte(`"}`)); ok && plainJSONString(state) {
					s.State = string(state)
					return s, nil
				}
			}
		}
	}
	s = storedStatus{}
	err := json.Unmarshal(b, &s)
	return s, err
}

// plainJSONString reports whether b, the inside of a JSON string, holds
// no escape, quote or control character (nor anything encoding/json
// escapes when it writes: <, >, &), so that it is the string's value as
// it stands. UTF-8 is not checked here: encoding/json wrote it.
func plainJSONString(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= 0x80 {
			return false
		}
	}
	return true
}
