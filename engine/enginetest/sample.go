package enginetest

import "github.com/heraldhq/herald/engine"

// SamplePublication returns a new publication with every field set but
// Offset, including an empty tag value and binary channel info, for
// engines' codec tests.
func SamplePublication() *engine.Publication {
	return &engine.Publication{
		Data:         []byte(`{"text":"hi"}`),
		Info:         &engine.ClientInfo{User: "u1", Client: "c1", ConnInfo: []byte(`{"a":1}`), ChanInfo: []byte{0, 1, 2}},
		Tags:         map[string]string{"k": "v", "empty": ""},
		Time:         1700000000123,
		ExceptClient: "c2",
	}
}
