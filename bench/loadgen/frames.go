package loadgen

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gobwas/ws"
)

// frame is one WebSocket frame parsed in place from a read buffer.
type frame struct {
	fin     bool
	op      ws.OpCode
	payload []byte // aliases the buffer
}

var errMaskedFrame = errors.New("server sent a masked frame")

// nextFrame parses the frame at the start of p. It returns the number of
// bytes used, or 0 when p does not hold the whole frame yet.
func nextFrame(p []byte, limit int64) (f frame, used int, err error) {
	f, hl, length, err := frameHeader(p, limit)
	if err != nil || hl == 0 || int64(len(p)-hl) < length {
		return f, 0, err
	}
	end := hl + int(length)
	f.payload = p[hl:end]
	return f, end, nil
}

// frameHeaderLen is the length of the header whose first two bytes are
// p[0:2].
func frameHeaderLen(p []byte) int {
	switch p[1] & 0x7f {
	case 126:
		return 4
	case 127:
		return 10
	}
	return 2
}

// frameHeader parses the header at the start of p: its length hl (0 when
// p does not hold all of it yet) and the payload's length; f has no
// payload.
func frameHeader(p []byte, limit int64) (f frame, hl int, length int64, err error) {
	if len(p) < 2 {
		return f, 0, 0, nil
	}
	f.fin = p[0]&0x80 != 0
	f.op = ws.OpCode(p[0] & 0x0f)
	if p[0]&0x70 != 0 {
		return f, 0, 0, fmt.Errorf("frame with reserved bits 0x%x: no extension was negotiated", p[0]&0x70)
	}
	if p[1]&0x80 != 0 {
		return f, 0, 0, errMaskedFrame
	}
	hl = frameHeaderLen(p)
	if len(p) < hl {
		return f, 0, 0, nil
	}
	switch hl {
	case 2:
		length = int64(p[1] & 0x7f)
	case 4:
		length = int64(binary.BigEndian.Uint16(p[2:4]))
	default:
		u := binary.BigEndian.Uint64(p[2:10])
		if u > 1<<62 {
			return f, 0, 0, fmt.Errorf("frame length %d is invalid", u)
		}
		length = int64(u)
	}
	if limit > 0 && length > limit {
		return f, 0, 0, fmt.Errorf("frame of %d bytes is over the %d-byte limit", length, limit)
	}
	return f, hl, length, nil
}

// appendClientFrame appends one final, masked frame (clients must mask).
func appendClientFrame(dst []byte, op ws.OpCode, payload []byte) []byte {
	dst = append(dst, 0x80|byte(op))
	n := len(payload)
	switch {
	case n < 126:
		dst = append(dst, 0x80|byte(n))
	case n <= 0xffff:
		dst = append(dst, 0x80|126)
		dst = binary.BigEndian.AppendUint16(dst, uint16(n))
	default:
		dst = append(dst, 0x80|127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(n))
	}
	mask := ws.NewMask()
	dst = append(dst, mask[:]...)
	start := len(dst)
	dst = append(dst, payload...)
	ws.Cipher(dst[start:], mask, 0)
	return dst
}
