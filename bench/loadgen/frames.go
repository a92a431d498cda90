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
	if len(p) < 2 {
		return f, 0, nil
	}
	f.fin = p[0]&0x80 != 0
	f.op = ws.OpCode(p[0] & 0x0f)
	if p[0]&0x70 != 0 {
		return f, 0, fmt.Errorf("frame with reserved bits 0x%x: no extension was negotiated", p[0]&0x70)
	}
	if p[1]&0x80 != 0 {
		return f, 0, errMaskedFrame
	}
	hl := 2
	length := int64(p[1] & 0x7f)
	switch length {
	case 126:
		if len(p) < 4 {
			return f, 0, nil
		}
		length = int64(binary.BigEndian.Uint16(p[2:4]))
		hl = 4
	case 127:
		if len(p) < 10 {
			return f, 0, nil
		}
		u := binary.BigEndian.Uint64(p[2:10])
		if u > 1<<62 {
			return f, 0, fmt.Errorf("frame length %d is invalid", u)
		}
		length = int64(u)
		hl = 10
	}
	if limit > 0 && length > limit {
		return f, 0, fmt.Errorf("frame of %d bytes is over the %d-byte limit", length, limit)
	}
	if int64(len(p)-hl) < length {
		return f, 0, nil
	}
	end := hl + int(length)
	f.payload = p[hl:end]
	return f, end, nil
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
