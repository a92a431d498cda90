package loadgen

import (
	"bytes"
	"strconv"
)

// minPayload is the smallest payload that holds a Message's fields.
const minPayload = 64

// AppendPayload appends m as a JSON object of exactly size bytes when size
// is large enough (a "p" string pads it), else of its natural size:
// {"k":STEP,"n":N,"q":SEQ,"t":DUE_NS,"p":"xxx…"}. The same bytes work as
// raw JSON data on JSON connections and as binary data on Protobuf ones.
func AppendPayload(dst []byte, m Message, size int) []byte {
	start := len(dst)
	dst = append(dst, `{"k":`...)
	dst = strconv.AppendInt(dst, int64(m.Step), 10)
	dst = append(dst, `,"n":`...)
	dst = strconv.AppendInt(dst, int64(m.N), 10)
	dst = append(dst, `,"q":`...)
	dst = strconv.AppendInt(dst, int64(m.Seq), 10)
	dst = append(dst, `,"t":`...)
	dst = strconv.AppendInt(dst, m.Intended, 10)
	const tail = `,"p":""}`
	pad := size - (len(dst) - start) - len(tail)
	dst = append(dst, `,"p":"`...)
	for ; pad > 0; pad-- {
		dst = append(dst, 'x')
	}
	return append(dst, `"}`...)
}

// ParsePayload reads a Message back from a payload made by AppendPayload.
// It looks the keys up rather than assuming their order or spacing, since
// a server may re-encode JSON data.
func ParsePayload(b []byte) (Message, bool) {
	k, ok1 := payloadInt(b, `"k"`)
	n, ok2 := payloadInt(b, `"n"`)
	q, ok3 := payloadInt(b, `"q"`)
	t, ok4 := payloadInt(b, `"t"`)
	if !ok1 || !ok2 || !ok3 || !ok4 || k < 0 || n <= 0 || q < 0 || q >= n || k > 1<<30 || n > 1<<30 {
		return Message{}, false
	}
	return Message{Step: int(k), N: int(n), Seq: int(q), Intended: t}, true
}

// payloadInt finds key, a colon and a non-negative integer after it.
func payloadInt(b []byte, key string) (int64, bool) {
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return 0, false
	}
	b = b[i+len(key):]
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 || b[0] != ':' {
		return 0, false
	}
	b = bytes.TrimLeft(b[1:], " \t\r\n")
	var v int64
	digits := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		if v > (1<<62)/10 {
			return 0, false
		}
		v = v*10 + int64(c-'0')
		digits++
	}
	return v, digits > 0
}
