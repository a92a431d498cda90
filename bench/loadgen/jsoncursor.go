package loadgen

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonCursor is a reusable, reflection-free JSON reader: the heavy client
// decodes replies and payloads with it as a Go client with generated
// decoders does (centrifuge-go decodes replies with the code generated in
// centrifugal/protocol v0.23.1, client.pb_cfjson.go, not with
// encoding/json). Every value is checked as it is read: a malformed
// message is an error, never a partial decode. Strings are unescaped into
// caller-owned buffers, so a warm cursor does not allocate.
type jsonCursor struct {
	b       []byte
	i       int
	err     error
	scratch []byte // skip's unescaping buffer
}

var errJSONEnd = errors.New("unexpected end of JSON")

func (c *jsonCursor) reset(b []byte) { c.b, c.i, c.err = b, 0, nil }

// fail records the first error; later reads return zero values.
func (c *jsonCursor) fail(what string) {
	if c.err != nil {
		return
	}
	if c.i >= len(c.b) {
		c.err = fmt.Errorf("%w: want %s", errJSONEnd, what)
		return
	}
	c.err = fmt.Errorf("JSON offset %d: want %s, found %q", c.i, what, c.b[c.i])
}

func (c *jsonCursor) space() {
	for c.i < len(c.b) {
		switch c.b[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

// peek is the first byte of the next value (0 at the end or after an error).
func (c *jsonCursor) peek() byte {
	c.space()
	if c.err != nil || c.i >= len(c.b) {
		return 0
	}
	return c.b[c.i]
}

// null consumes a null if one is next.
func (c *jsonCursor) null() bool {
	if c.peek() != 'n' {
		return false
	}
	c.literal("null")
	return true
}

func (c *jsonCursor) literal(word string) {
	if len(c.b)-c.i < len(word) || string(c.b[c.i:c.i+len(word)]) != word {
		c.fail(word)
		return
	}
	c.i += len(word)
}

// object walks an object's members: first call with more false; each true
// return leaves the cursor on the member's value, which the caller must
// read (or skip) before calling again. key aliases the input when it has
// no escapes, else keyBuf. A null object has no members.
func (c *jsonCursor) object(more *bool, key *[]byte, keyBuf *[]byte) bool {
	if !*more {
		*more = true
		if c.null() {
			return false
		}
		if c.peek() != '{' {
			c.fail("an object")
			return false
		}
		c.i++
		if c.peek() == '}' {
			c.i++
			return false
		}
	} else {
		switch c.peek() {
		case ',':
			c.i++
		case '}':
			c.i++
			return false
		default:
			c.fail("',' or '}'")
			return false
		}
	}
	*key = c.str(keyBuf)
	if c.peek() != ':' {
		c.fail("':'")
		return false
	}
	c.i++
	return c.err == nil
}

// array walks an array's elements like object walks members.
func (c *jsonCursor) array(more *bool) bool {
	if !*more {
		*more = true
		if c.null() {
			return false
		}
		if c.peek() != '[' {
			c.fail("an array")
			return false
		}
		c.i++
		if c.peek() == ']' {
			c.i++
			return false
		}
		return c.err == nil
	}
	switch c.peek() {
	case ',':
		c.i++
		return c.err == nil
	case ']':
		c.i++
	default:
		c.fail("',' or ']'")
	}
	return false
}

// str reads a string: the input's bytes when it holds no escape, else its
// unescaped form in *buf (reused).
func (c *jsonCursor) str(buf *[]byte) []byte {
	if c.null() {
		return nil
	}
	if c.peek() != '"' {
		c.fail("a string")
		return nil
	}
	c.i++
	start := c.i
	for c.i < len(c.b) {
		switch ch := c.b[c.i]; {
		case ch == '"':
			c.i++
			return c.b[start : c.i-1]
		case ch == '\\':
			return c.unescape(start, buf)
		case ch < 0x20:
			c.fail("no control characters in a string")
			return nil
		case ch >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(c.b[c.i:])
			if r == utf8.RuneError && n == 1 {
				c.fail("valid UTF-8")
				return nil
			}
			c.i += n
		default:
			c.i++
		}
	}
	c.fail("the end of a string")
	return nil
}

// unescape continues a string from its first backslash, writing into buf.
func (c *jsonCursor) unescape(start int, buf *[]byte) []byte {
	out := append((*buf)[:0], c.b[start:c.i]...)
	for c.i < len(c.b) {
		ch := c.b[c.i]
		switch {
		case ch == '"':
			c.i++
			*buf = out
			return out
		case ch < 0x20:
			c.fail("no control characters in a string")
			return nil
		case ch != '\\':
			out = append(out, ch)
			c.i++
			continue
		}
		if c.i+1 >= len(c.b) {
			break
		}
		c.i += 2
		switch e := c.b[c.i-1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := c.hex4()
			if utf16.IsSurrogate(r) && c.i+1 < len(c.b) && c.b[c.i] == '\\' && c.b[c.i+1] == 'u' {
				c.i += 2
				r = utf16.DecodeRune(r, c.hex4())
			}
			out = utf8.AppendRune(out, r)
		default:
			c.i--
			c.fail("a valid escape")
			return nil
		}
	}
	c.fail("the end of a string")
	return nil
}

func (c *jsonCursor) hex4() rune {
	if len(c.b)-c.i < 4 {
		c.fail("four hex digits")
		return utf8.RuneError
	}
	v, err := strconv.ParseUint(string(c.b[c.i:c.i+4]), 16, 16)
	if err != nil {
		c.fail("four hex digits")
		return utf8.RuneError
	}
	c.i += 4
	return rune(v)
}

// number reads a number's text, checking its syntax.
func (c *jsonCursor) number() []byte {
	c.space()
	start := c.i
	if c.i < len(c.b) && c.b[c.i] == '-' {
		c.i++
	}
	digits := c.digits()
	if digits == 0 || (digits > 1 && c.b[c.i-digits] == '0') {
		c.i = start
		c.fail("a number")
		return nil
	}
	if c.i < len(c.b) && c.b[c.i] == '.' {
		c.i++
		if c.digits() == 0 {
			c.fail("digits after '.'")
			return nil
		}
	}
	if c.i < len(c.b) && (c.b[c.i] == 'e' || c.b[c.i] == 'E') {
		c.i++
		if c.i < len(c.b) && (c.b[c.i] == '+' || c.b[c.i] == '-') {
			c.i++
		}
		if c.digits() == 0 {
			c.fail("an exponent")
			return nil
		}
	}
	return c.b[start:c.i]
}

func (c *jsonCursor) digits() int {
	n := 0
	for c.i < len(c.b) && c.b[c.i] >= '0' && c.b[c.i] <= '9' {
		c.i++
		n++
	}
	return n
}

// int reads an integer of at most bits bits (null is 0).
func (c *jsonCursor) int(bits int) int64 {
	if c.null() {
		return 0
	}
	v, err := strconv.ParseInt(string(c.number()), 10, bits)
	if err != nil && c.err == nil {
		c.err = fmt.Errorf("JSON offset %d: %w", c.i, err)
	}
	return v
}

// uint reads an unsigned integer of at most bits bits (null is 0).
func (c *jsonCursor) uint(bits int) uint64 {
	if c.null() {
		return 0
	}
	v, err := strconv.ParseUint(string(c.number()), 10, bits)
	if err != nil && c.err == nil {
		c.err = fmt.Errorf("JSON offset %d: %w", c.i, err)
	}
	return v
}

// bool reads true or false (null is false).
func (c *jsonCursor) bool() bool {
	switch c.peek() {
	case 't':
		c.literal("true")
		return true
	case 'f':
		c.literal("false")
	case 'n':
		c.literal("null")
	default:
		c.fail("true or false")
	}
	return false
}

// raw reads any value and returns its bytes (nil for null), checked.
func (c *jsonCursor) raw() []byte {
	if c.null() {
		return nil
	}
	start := c.i
	c.skip()
	if c.err != nil {
		return nil
	}
	return c.b[start:c.i]
}

// skip reads any value, checking it.
func (c *jsonCursor) skip() {
	switch c.peek() {
	case '{':
		var more bool
		var key []byte
		for c.object(&more, &key, &c.scratch) {
			c.skip()
		}
	case '[':
		var more bool
		for c.array(&more) {
			c.skip()
		}
	case '"':
		c.str(&c.scratch)
	case 't':
		c.literal("true")
	case 'f':
		c.literal("false")
	case 'n':
		c.literal("null")
	default:
		c.number()
	}
}

// end checks that only space is left.
func (c *jsonCursor) end() error {
	if c.err == nil && c.peek() != 0 {
		c.fail("the end of the value")
	}
	return c.err
}
