package httpstream

import (
	"testing"
	"unicode/utf8"

	"github.com/heraldhq/herald/protocol"
)

// FuzzParseEmulation feeds parseEmulation arbitrary bodies in both
// encodings: it never panics, and what it accepts names a session and
// carries commands (the hub's session check, fuzzed in package hub, takes
// it from there).
func FuzzParseEmulation(f *testing.F) {
	f.Add(false, []byte(`{"session":"s","node":"n","data":"{\"id\":1}"}`))
	f.Add(false, []byte(`{"session":"s","data":{"id":1}}`))
	f.Add(false, []byte(`{"session":"","node":"n","data":""}`))
	f.Add(false, []byte(`{"session":"s","node":"n","data":"\u0000"}`))
	pb, _ := (&protocol.EmulationRequest{Session: "s", Node: "n", Data: []byte{1, 2}}).MarshalVT()
	f.Add(true, pb)
	f.Add(true, []byte{0x0a, 0xff})
	f.Fuzz(func(t *testing.T, binary bool, body []byte) {
		typ := protocol.TypeJSON
		if binary {
			typ = protocol.TypeProtobuf
		}
		req, err := parseEmulation(typ, body)
		if err != nil {
			return
		}
		if req.Session == "" || len(req.Data) == 0 {
			t.Fatalf("accepted %q as session %q with %d bytes of commands", body, req.Session, len(req.Data))
		}
		if !binary && !utf8.Valid([]byte(req.Session)) {
			t.Fatalf("accepted a JSON session that is not UTF-8: %q", req.Session)
		}
	})
}
