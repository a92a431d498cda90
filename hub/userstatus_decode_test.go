package hub

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDecodeStoredStatus: the direct read of a stored status gives what
// encoding/json gives, for every value update_user_status writes (states
// with escapes, non-ASCII, HTML characters) and for values it does not
// write (other key orders, spaces, numbers out of range, bad JSON),
// which go through encoding/json.
func TestDecodeStoredStatus(t *testing.T) {
	var values [][]byte
	for _, st := range []storedStatus{
		{Active: 0}, {Active: 1764400000}, {Active: 1764400000, State: "away"},
		{Active: 7, State: `say "hi"`}, {Active: 7, State: `a\b`}, {Active: 7, State: "tab\there"},
		{Active: 7, State: "<b>&"}, {Active: 7, State: "Zürich 東京"}, {Active: -5, State: "x"},
		{Active: 9, State: strings.Repeat("z", 300)},
	} {
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		values = append(values, b)
	}
	for _, raw := range []string{
		`{"s":"x","a":3}`, `{ "a": 3 }`, `{"a":03}`, `{"a":99999999999999999999}`, `{"a":3,"s":"x"`,
		`{"a":}`, `{"a":3}x`, `not json`, ``, `{"a":1.5}`, `{"a":3,"s":"x","z":1}`,
	} {
		values = append(values, []byte(raw))
	}
	for _, b := range values {
		var want storedStatus
		wantErr := json.Unmarshal(b, &want)
		got, err := decodeStoredStatus(b)
		if (err != nil) != (wantErr != nil) || got != want {
			t.Errorf("%s: got %+v, %v; encoding/json gives %+v, %v", b, got, err, want, wantErr)
		}
	}
}

func BenchmarkDecodeStoredStatus(b *testing.B) {
	v := []byte(`{"a":1764400000,"s":"away"}`)
	for b.Loop() {
		if _, err := decodeStoredStatus(v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeStoredStatusJSON(b *testing.B) {
	v := []byte(`{"a":1764400000,"s":"away"}`)
	for b.Loop() {
		var s storedStatus
		if err := json.Unmarshal(v, &s); err != nil {
			b.Fatal(err)
		}
	}
}
