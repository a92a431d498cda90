package config

import (
	"slices"
	"testing"
)

// TestCentrifugoWebSocketReadBufferSize: Centrifugo's websocket and
// uni_websocket read_buffer_size become the read buffer of the transport
// of each endpoint (uni_websocket's 0 is the websocket section's), and
// are not named as not needed; the write buffer keys still are.
func TestCentrifugoWebSocketReadBufferSize(t *testing.T) {
	for _, tc := range []struct {
		file          string
		bidi, uni     int
		notNeededKeys []string
	}{
		{`{}`, 4096, 4096, nil},
		{`{"websocket": {"read_buffer_size": 2048}}`, 2048, 2048, nil},
		{`{"websocket": {"read_buffer_size": 2048}, "uni_websocket": {"read_buffer_size": 512}}`, 2048, 512, nil},
		{`{"uni_websocket": {"read_buffer_size": 512, "write_buffer_size": 512}}`, 4096, 512, []string{"uni_websocket.write_buffer_size"}},
	} {
		cfg, err := ParseCentrifugo([]byte(tc.file), "config.json", nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		bidi, uni := cfg.WebSocket.Transport().WithDefaults(), cfg.UniTransport().WithDefaults()
		if bidi.ReadBufferSize != tc.bidi || uni.ReadBufferSize != tc.uni {
			t.Errorf("%s: read buffers %d and %d, want %d and %d", tc.file, bidi.ReadBufferSize, uni.ReadBufferSize, tc.bidi, tc.uni)
		}
		if got := cfg.CentrifugoReport().NotNeeded; !slices.Equal(got, tc.notNeededKeys) {
			t.Errorf("%s: named as not needed: %v, want %v", tc.file, got, tc.notNeededKeys)
		}
	}
	cfg, err := ParseCentrifugo([]byte(`{"websocket": {"read_buffer_size": -1}}`), "config.json", nil)
	if err == nil {
		err = cfg.Validate()
	}
	if err == nil {
		t.Error("a negative websocket.read_buffer_size is taken")
	}
}
