package protocol

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
)

// FuzzDecodeCommands feeds arbitrary frames to both decoders. Neither may
// panic, and whatever decodes must encode again: as valid JSON (payloads
// taken from JSON are valid by construction, which is what lets the encoder
// skip validation) and, for Protobuf, back to equal commands.
func FuzzDecodeCommands(f *testing.F) {
	for _, step := range appendixSteps() {
		f.Add([]byte(step.client))
	}
	for _, s := range []string{
		"", "{}", "{}\n{}", "\n \n", `{"id":1,"publish":{"channel":"c","data":null}}`,
		`{"id":1,"connect":{"subs":{"a":{"recover":true,"offset":1}},"headers":{"k":"v"}}}`,
		`{"id":2,"subscribe":{"channel":"c","tf":{"op":"or","nodes":[{"key":"a","cmp":"eq","val":"b"}]}}}`,
		`{"id":3,"history":{"channel":"c","limit":-1,"since":{"offset":5,"epoch":"e"}}}`,
		`{"send":{"data":{"a":[1,2]}}}`, `{"id":10,"refresh":{"token":"t"}}`,
		`{"id":11,"sub_refresh":{"channel":"c","token":"t"}}`, `{"id":12,"rpc":{"method":"m","data":"s"}}`,
		`{"id":13,"ping":{"x":1}}`, `{"id":14,"unsubscribe":{"channel":"c"}}`,
		`{"id":15,"publish":{"channel":"c","data":1.5e3,"type":1,"key":"k","removed":true}}`,
		`{"id":16,"subscribe":{"channel":"c","token":"t","recover":true,"epoch":"e","offset":5,"data":[],"positioned":true,"recoverable":true,"join_leave":true,"delta":"fossil","flag":3,"type":1,"phase":2,"cursor":"x","limit":-1,"asc":true}}`,
		`{"id":17,"subscribe":{"recover":1}}`, `{"id":18,"history":{"since":[]}}`, `{"id":19,"connect":{"subs":[]}}`,
		`{"id":20,"connect":{"headers":{"a":null},"subs":{"x":null}}}`, `{"id":21,"publish":{"data":null},"publish":{"channel":"c"}}`,
		`[1]`, `null`, `{"id":1`, "\x00", "\x00\x00", "\x80", "\x05\x08",
	} {
		f.Add([]byte(s))
	}
	full, err := AppendCommand(TypeProtobuf, nil, filledCommand())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(AppendMessage(TypeProtobuf, nil, full))
	fullJSON, err := AppendCommand(TypeJSON, nil, filledCommand())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(fullJSON)

	f.Fuzz(func(t *testing.T, frame []byte) {
		checkAgainstEncodingJSON(t, frame)
		if cmds, err := DecodeCommands(TypeJSON, frame); err == nil {
			for _, c := range cmds {
				b, err := AppendCommand(TypeJSON, nil, c)
				if err != nil {
					t.Fatal(err)
				}
				if !json.Valid(b) || !utf8.Valid(b) {
					t.Fatalf("re-encoded command is not valid JSON: %s", b)
				}
				again, err := DecodeCommands(TypeJSON, b)
				if err != nil || len(again) != 1 {
					t.Fatalf("re-encoded command %s does not decode: %v", b, err)
				}
			}
		}
		if cmds, err := DecodeCommands(TypeProtobuf, frame); err == nil {
			var out []byte
			for _, c := range cmds {
				b, err := AppendCommand(TypeProtobuf, nil, c)
				if err != nil {
					t.Fatal(err)
				}
				out = AppendMessage(TypeProtobuf, out, b)
			}
			again, err := DecodeCommands(TypeProtobuf, out)
			if err != nil || len(again) != len(cmds) {
				t.Fatalf("re-encoded commands do not decode: %v", err)
			}
			for i := range cmds {
				if !proto.Equal(again[i], cmds[i]) {
					t.Fatalf("command %d changed: %v then %v", i, cmds[i], again[i])
				}
			}
		}
	})
}

// checkAgainstEncodingJSON compares the hand-written command decoder with
// json.Unmarshal into *Command, line by line. It skips lines where the two
// may rightly differ: invalid UTF-8 (rejected only by DecodeCommands), and
// keys that are not plain lower-case or repeat in an object, because
// encoding/json matches keys case-insensitively and merges repeated arrays
// element by element.
func checkAgainstEncodingJSON(t *testing.T, frame []byte) {
	for line := range bytes.SplitSeq(bytes.TrimSpace(frame), []byte{'\n'}) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || !utf8.Valid(line) || !json.Valid(line) || !plainKeys(line) {
			continue
		}
		got, gotErr := DecodeCommands(TypeJSON, line)
		want := new(Command)
		wantErr := json.Unmarshal(line, want)
		if line[0] != '{' {
			wantErr = errNotObject
		}
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("%s: DecodeCommands error %v, encoding/json error %v", line, gotErr, wantErr)
		}
		if gotErr == nil && !proto.Equal(got[0], want) {
			t.Fatalf("%s:\nDecodeCommands %v\nencoding/json  %v", line, got[0], want)
		}
	}
}

// plainKeys reports whether every object key in the JSON value b is
// lower-case ASCII and unique within its object.
func plainKeys(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	type object struct{ keys map[string]bool }
	var stack []*object
	expectKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return err == io.EOF
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, &object{keys: map[string]bool{}})
				expectKey = true
				continue
			case '[':
				stack = append(stack, nil)
			case '}', ']':
				stack = stack[:len(stack)-1]
			}
		case string:
			if expectKey {
				top := stack[len(stack)-1]
				if top.keys[v] || strings.ToLower(v) != v || !isASCII(v) {
					return false
				}
				top.keys[v] = true
				expectKey = false
				continue
			}
		}
		// After a value inside an object, the next string is a key.
		expectKey = len(stack) > 0 && stack[len(stack)-1] != nil
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
