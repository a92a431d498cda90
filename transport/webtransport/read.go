package webtransport

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/heraldhq/herald/protocol"
)

// initialReadBuf is the read buffer of a new session; it grows, up to one
// message's bound, only for a message that does not fit.
const initialReadBuf = 4 << 10

// errBadInput is what the client sent being wrong, as opposed to the
// stream ending: errTooBig, or a length prefix that is no varint.
var errBadInput = errors.New("bad input")

// errTooBig: a message of the client's is larger than the bound.
var errTooBig = fmt.Errorf("%w: message too big", errBadInput)

// reader splits the client's half of the stream into frames for
// hub.Client.HandleFrame: every complete message buffered so far, JSON
// lines joined by "\n" or varint-delimited Protobuf messages, as the hub
// decodes a frame. A frame aliases the buffer and is valid until the next
// call (the hub copies what it decodes).
type reader struct {
	r     io.Reader
	proto protocol.Type
	limit int
	buf   []byte
	start int // buf[start:] is unread
}

func newReader(r io.Reader, proto protocol.Type, limit int) *reader {
	return &reader{r: r, proto: proto, limit: limit}
}

// next returns the next frame, reading until it holds a complete message.
// Its errors are the stream's, errTooBig, or a malformed length prefix.
func (rd *reader) next() ([]byte, error) {
	for {
		if rd.start < len(rd.buf) {
			end, err := rd.complete(rd.buf[rd.start:])
			if err != nil {
				return nil, err
			}
			if end > 0 {
				frame := rd.buf[rd.start : rd.start+end]
				rd.start += end
				if rd.proto == protocol.TypeJSON && len(bytes.TrimSpace(frame)) == 0 {
					// Blank lines carry no command: nothing to refuse.
					continue
				}
				return frame, nil
			}
		}
		if err := rd.fill(); err != nil {
			return nil, err
		}
	}
}

// complete is the length of the complete messages that start p (0: none
// yet), or errTooBig when the message under way is larger than the bound.
func (rd *reader) complete(p []byte) (int, error) {
	if rd.proto == protocol.TypeJSON {
		end := bytes.LastIndexByte(p, '\n') + 1
		for rest := p[:end]; len(rest) > 0; {
			line, after, _ := bytes.Cut(rest, []byte{'\n'})
			if len(line) > rd.limit {
				return 0, fmt.Errorf("%w: a line of more than %d bytes", errTooBig, rd.limit)
			}
			rest = after
		}
		if len(p)-end > rd.limit {
			return 0, fmt.Errorf("%w: a line of more than %d bytes", errTooBig, rd.limit)
		}
		return end, nil
	}
	end := 0
	for end < len(p) {
		size, n := protowire.ConsumeVarint(p[end:])
		if n < 0 {
			if errors.Is(protowire.ParseError(n), io.ErrUnexpectedEOF) && len(p)-end < binaryVarintMax {
				break // the prefix is not all here yet
			}
			return 0, fmt.Errorf("%w: length prefix: %w", errBadInput, protowire.ParseError(n))
		}
		if size > uint64(rd.limit) {
			return 0, fmt.Errorf("%w: a message of %d bytes, more than %d", errTooBig, size, rd.limit)
		}
		if uint64(len(p)-end-n) < size {
			break
		}
		end += n + int(size)
	}
	return end, nil
}

// binaryVarintMax is the longest varint.
const binaryVarintMax = 10

// fill moves the unread bytes to the front of the buffer, grows it when
// they fill it (complete has checked them against the bound, so it grows
// to at most one message and its prefix or line end), and reads more.
func (rd *reader) fill() error {
	unread := len(rd.buf) - rd.start
	if rd.start > 0 {
		copy(rd.buf, rd.buf[rd.start:])
		rd.buf, rd.start = rd.buf[:unread], 0
	}
	if unread == cap(rd.buf) {
		n := min(max(2*cap(rd.buf), initialReadBuf), rd.limit+binaryVarintMax+1)
		if n <= cap(rd.buf) {
			n = cap(rd.buf) + initialReadBuf
		}
		nb := make([]byte, unread, n)
		copy(nb, rd.buf)
		rd.buf = nb
	}
	n, err := rd.r.Read(rd.buf[unread:cap(rd.buf)])
	rd.buf = rd.buf[:unread+n]
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}
