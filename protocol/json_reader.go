package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// jsonReader walks one JSON value that json.Valid has already accepted and
// that is valid UTF-8. Commands are decoded with it instead of encoding/json,
// which scanned nested payloads several times (3x slower for a publish
// command, with 3x the allocations). Syntax checking stays with
// encoding/json, so the reader only checks that values have the types the
// fields need.
type jsonReader struct {
	b []byte
	i int
}

var errNotObject = errors.New("not a JSON object")

func (r *jsonReader) skipSpace() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// peek returns the first byte of the next token.
func (r *jsonReader) peek() byte {
	r.skipSpace()
	if r.i < len(r.b) {
		return r.b[r.i]
	}
	return 0
}

// null consumes a null literal if one is next.
func (r *jsonReader) null() bool {
	if r.peek() == 'n' {
		r.i += len("null")
		return true
	}
	return false
}

// open consumes the '{' that starts an object.
func (r *jsonReader) open() error {
	if r.peek() != '{' {
		return errNotObject
	}
	r.i++
	return nil
}

// next reads the next member's key and colon, or the closing '}' (ok false).
// The returned key may alias the input.
func (r *jsonReader) next() (key []byte, ok bool, err error) {
	switch r.peek() {
	case '}':
		r.i++
		return nil, false, nil
	case ',':
		r.i++
		r.skipSpace()
	}
	key, err = r.stringBytes()
	if err != nil {
		return nil, false, err
	}
	r.skipSpace()
	r.i++ // ':'
	return key, true, nil
}

// stringBytes reads a string token, unescaped; it aliases the input when
// the string has no escapes.
func (r *jsonReader) stringBytes() ([]byte, error) {
	if r.peek() != '"' {
		return nil, r.typeError("a string")
	}
	start := r.i
	r.i++
	escaped := false
	for ; r.b[r.i] != '"'; r.i++ {
		if r.b[r.i] == '\\' {
			escaped = true
			r.i++
		}
	}
	r.i++
	if !escaped {
		return r.b[start+1 : r.i-1], nil
	}
	// Escapes are rare in commands; encoding/json knows all their forms.
	var s string
	if err := json.Unmarshal(r.b[start:r.i], &s); err != nil {
		return nil, err
	}
	return []byte(s), nil
}

func (r *jsonReader) string() (string, error) {
	b, err := r.stringBytes()
	return string(b), err
}

func (r *jsonReader) bool() (bool, error) {
	switch r.peek() {
	case 't':
		r.i += len("true")
		return true, nil
	case 'f':
		r.i += len("false")
		return false, nil
	}
	return false, r.typeError("true or false")
}

// number returns the literal of a number token.
func (r *jsonReader) number() ([]byte, error) {
	c := r.peek()
	if c != '-' && (c < '0' || c > '9') {
		return nil, r.typeError("a number")
	}
	start := r.i
	for r.i < len(r.b) && isNumberByte(r.b[r.i]) {
		r.i++
	}
	return r.b[start:r.i], nil
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// uint and int accept integers only, like encoding/json does for integer
// fields: no fraction, no exponent, no overflow.
func (r *jsonReader) uint(bits int) (uint64, error) {
	lit, err := r.number()
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(string(lit), 10, bits)
	if err != nil {
		return 0, fmt.Errorf("number %s does not fit uint%d", lit, bits)
	}
	return v, nil
}

func (r *jsonReader) int(bits int) (int64, error) {
	lit, err := r.number()
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(string(lit), 10, bits)
	if err != nil {
		return 0, fmt.Errorf("number %s does not fit int%d", lit, bits)
	}
	return v, nil
}

func (r *jsonReader) uint32() (uint32, error) {
	v, err := r.uint(32)
	return uint32(v), err
}

func (r *jsonReader) int32() (int32, error) {
	v, err := r.int(32)
	return int32(v), err
}

// raw returns a copy of the next value's bytes, or nil for null.
func (r *jsonReader) raw() []byte {
	if r.null() {
		return nil
	}
	start := r.i
	r.skip()
	return bytes.Clone(r.b[start:r.i])
}

// skip passes over the next value.
func (r *jsonReader) skip() {
	switch r.peek() {
	case '"':
		r.skipString()
	case '{', '[':
		depth := 0
		for {
			switch r.b[r.i] {
			case '"':
				r.skipString()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			r.i++
			if depth == 0 {
				return
			}
		}
	default: // number or literal
		for r.i < len(r.b) {
			switch r.b[r.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return
			}
			r.i++
		}
	}
}

func (r *jsonReader) skipString() {
	for r.i++; r.b[r.i] != '"'; r.i++ {
		if r.b[r.i] == '\\' {
			r.i++
		}
	}
	r.i++
}

func (r *jsonReader) typeError(want string) error {
	c := r.peek()
	got := "a number"
	switch c {
	case '"':
		got = "a string"
	case '{':
		got = "an object"
	case '[':
		got = "an array"
	case 't', 'f':
		got = "a boolean"
	case 'n':
		got = "null"
	}
	return fmt.Errorf("got %s, want %s", got, want)
}

// jsonMessage decodes the next value into *p: null clears it (as
// encoding/json does), an object is merged into the existing message.
func jsonMessage[T any](r *jsonReader, p **T, dec func(*jsonReader, *T) error) error {
	if r.null() {
		*p = nil
		return nil
	}
	if *p == nil {
		*p = new(T)
	}
	return dec(r, *p)
}

// jsonMessageMap decodes an object of messages into *p, adding to the map.
func jsonMessageMap[T any](r *jsonReader, p *map[string]*T, dec func(*jsonReader, *T) error) error {
	if r.null() {
		*p = nil
		return nil
	}
	if err := r.open(); err != nil {
		return err
	}
	if *p == nil {
		*p = make(map[string]*T)
	}
	for {
		k, ok, err := r.next()
		if err != nil || !ok {
			return err
		}
		key := string(k)
		var v *T
		if err := jsonMessage(r, &v, dec); err != nil {
			return fmt.Errorf("key %q: %w", key, err)
		}
		(*p)[key] = v
	}
}

// jsonStringMap decodes an object of strings into *p, adding to the map.
func jsonStringMap(r *jsonReader, p *map[string]string) error {
	if r.null() {
		*p = nil
		return nil
	}
	if err := r.open(); err != nil {
		return err
	}
	if *p == nil {
		*p = make(map[string]string)
	}
	for {
		k, ok, err := r.next()
		if err != nil || !ok {
			return err
		}
		key := string(k)
		v := ""
		if !r.null() {
			if v, err = r.string(); err != nil {
				return fmt.Errorf("key %q: %w", key, err)
			}
		}
		(*p)[key] = v
	}
}

// jsonList decodes an array into *p, replacing its elements; elem decodes
// one element, which may be null.
func jsonList[T any](r *jsonReader, p *[]T, elem func(*jsonReader) (T, error)) error {
	if r.null() {
		*p = nil
		return nil
	}
	if r.peek() != '[' {
		return r.typeError("an array")
	}
	r.i++
	*p = (*p)[:0]
	if *p == nil {
		*p = []T{}
	}
	for {
		switch r.peek() {
		case ']':
			r.i++
			return nil
		case ',':
			r.i++
		}
		v, err := elem(r)
		if err != nil {
			return fmt.Errorf("element %d: %w", len(*p), err)
		}
		*p = append(*p, v)
	}
}
