package consumer_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/heraldhq/herald/consumer"
)

// TestDecode: Centrifugo's consumer payloads: the method apart with the
// request as data, or the {"method","payload"} envelope whose payload is
// an object or a JSON string; anything else is malformed, naming why.
func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		method, data string
		want         consumer.Command
		bad          string
	}{
		{method: "publish", data: `{"channel":"a"}`, want: consumer.Command{Method: "publish", Payload: []byte(`{"channel":"a"}`)}},
		{data: `{"method":"broadcast","payload":{"channels":["a"]}}`, want: consumer.Command{Method: "broadcast", Payload: []byte(`{"channels":["a"]}`)}},
		{data: `{"method":"publish","payload":"{\"channel\":\"a\"}"}`, want: consumer.Command{Method: "publish", Payload: []byte(`{"channel":"a"}`)}},
		{data: `{"payload":{}}`, bad: "method is missing"},
		{data: `not json`, bad: "not a"},
		{data: `{"method":"publish","payload":"\x"}`, bad: "not a"},
	} {
		got, err := consumer.Decode(tc.method, []byte(tc.data))
		if tc.bad != "" {
			if !errors.Is(err, consumer.ErrMalformed) || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("Decode(%q, %q): %v, want malformed: %s", tc.method, tc.data, err, tc.bad)
			}
			continue
		}
		if err != nil || got.Method != tc.want.Method || string(got.Payload) != string(tc.want.Payload) {
			t.Errorf("Decode(%q, %q) = %q %s, %v; want %q %s", tc.method, tc.data, got.Method, got.Payload, err, tc.want.Method, tc.want.Payload)
		}
	}
}
