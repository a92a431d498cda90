package jsonclient

import (
	"encoding/json"
	"testing"
)

// ErrorCode returns the code of an error reply, or 0.
func ErrorCode(m map[string]any) int {
	e, ok := m["error"].(map[string]any)
	if !ok {
		return 0
	}
	return int(Num(e["code"]))
}

// WantError checks that m is an error reply with code.
func WantError(t testing.TB, m map[string]any, code int) {
	t.Helper()
	if got := ErrorCode(m); got != code {
		t.Fatalf("want error %d, got %v", code, m)
	}
}

// Path walks nested JSON objects; nil when a key is missing.
func Path(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		o, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = o[k]
	}
	return v
}

// Num converts a decoded JSON number to int64; -1 when v is not a number.
func Num(v any) int64 {
	f, ok := v.(float64)
	if !ok {
		return -1
	}
	return int64(f)
}

// Compact re-encodes decoded JSON without spaces, for comparing payloads.
func Compact(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// PushesOf picks the pushes of kind ("pub", "join", ...) in channel ch.
func PushesOf(msgs []map[string]any, ch, kind string) []map[string]any {
	var out []map[string]any
	for _, m := range msgs {
		if Path(m, "push", "channel") == ch {
			if p, ok := Path(m, "push", kind).(map[string]any); ok {
				out = append(out, p)
			}
		}
	}
	return out
}
