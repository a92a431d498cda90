package protocol

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// Low-level append helpers of the hand-written JSON encoder. They never
// allocate when dst has room, which keeps encoding a push for many
// subscribers cheap.

const hexDigits = "0123456789abcdef"

// jsonSafe reports whether an ASCII byte goes into a JSON string as it is.
func jsonSafe(c byte) bool {
	return c >= 0x20 && c != '"' && c != '\\'
}

// appendString appends s as a JSON string. Control characters are escaped,
// invalid UTF-8 becomes U+FFFD, and U+2028/U+2029 are escaped because
// JavaScript parsers before ES2019 reject them raw. HTML characters are left
// alone: the output is never embedded in HTML.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe(c) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendRaw appends an embedded JSON payload without its raw newlines, so
// that it cannot split a newline-delimited frame. In valid JSON a raw
// newline can only be whitespace between tokens, so dropping it keeps the
// value intact.
func appendRaw(dst, raw []byte) []byte {
	for {
		i := bytes.IndexByte(raw, '\n')
		if i < 0 {
			return append(dst, raw...)
		}
		dst = append(dst, raw[:i]...)
		raw = raw[i+1:]
	}
}

// jsonObject tracks whether a field was already written into the object
// that started at start, to place commas without a flag per encoder.
type jsonObject int

// openObject appends '{' and returns the tracker for the new object.
func openObject(dst []byte) ([]byte, jsonObject) {
	dst = append(dst, '{')
	return dst, jsonObject(len(dst))
}

// key appends a separator when needed and the quoted key with its colon;
// k must be a plain ASCII name.
func (o jsonObject) key(dst []byte, k string) []byte {
	if len(dst) > int(o) {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, k...)
	return append(dst, '"', ':')
}

func (o jsonObject) uint(dst []byte, k string, v uint64) []byte {
	if v == 0 {
		return dst
	}
	return strconv.AppendUint(o.key(dst, k), v, 10)
}

func (o jsonObject) int(dst []byte, k string, v int64) []byte {
	if v == 0 {
		return dst
	}
	return strconv.AppendInt(o.key(dst, k), v, 10)
}

func (o jsonObject) bool(dst []byte, k string, v bool) []byte {
	if !v {
		return dst
	}
	return append(o.key(dst, k), "true"...)
}

func (o jsonObject) string(dst []byte, k, v string) []byte {
	if v == "" {
		return dst
	}
	return appendString(o.key(dst, k), v)
}

func (o jsonObject) raw(dst []byte, k string, v []byte) []byte {
	if len(v) == 0 {
		return dst
	}
	return appendRaw(o.key(dst, k), v)
}

// appendStringMap appends a map of strings; key order is the map's.
func appendStringMap(dst []byte, m map[string]string) []byte {
	dst, o := openObject(dst)
	for k, v := range m {
		if len(dst) > int(o) {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		dst = appendString(dst, v)
	}
	return append(dst, '}')
}

// appendStrings appends an array of strings.
func appendStrings(dst []byte, s []string) []byte {
	dst = append(dst, '[')
	for i, v := range s {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, v)
	}
	return append(dst, ']')
}

// appendMessages appends an array of messages encoded by enc.
func appendMessages[T any](dst []byte, s []*T, enc func([]byte, *T) []byte) []byte {
	dst = append(dst, '[')
	for i, v := range s {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendMessage(dst, v, enc)
	}
	return append(dst, ']')
}

// appendMessageMap appends a map of messages encoded by enc; key order is
// the map's.
func appendMessageMap[T any](dst []byte, m map[string]*T, enc func([]byte, *T) []byte) []byte {
	dst, o := openObject(dst)
	for k, v := range m {
		if len(dst) > int(o) {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		dst = appendMessage(dst, v, enc)
	}
	return append(dst, '}')
}

func appendMessage[T any](dst []byte, v *T, enc func([]byte, *T) []byte) []byte {
	if v == nil {
		return append(dst, "null"...)
	}
	return enc(dst, v)
}
