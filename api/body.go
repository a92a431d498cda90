package api

import (
	"bytes"
	"errors"
	"io"
	"math"
	"net/http"
)

// errBodyTooLarge reports a body over the configured limit.
var errBodyTooLarge = errors.New("request body too large")

// readBody reads the whole body into buf (reusing its capacity), up to
// limit bytes. Reading to the end, rather than decoding from the stream,
// lets net/http keep the connection alive for the next request.
//
// The declared Content-Length does not size the buffer: a caller could
// declare a gigabyte and send a byte. The buffer grows with what actually
// arrives, so memory follows the bytes received, never the bytes promised.
func readBody(r *http.Request, buf []byte, limit int64) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return buf, nil
	}
	// One byte past the limit tells a body over it from one at it.
	if limit < math.MaxInt64 {
		limit++
	}
	b := bytes.NewBuffer(buf[:0])
	_, err := b.ReadFrom(io.LimitReader(r.Body, limit))
	if int64(b.Len()) >= limit {
		return b.Bytes(), errBodyTooLarge
	}
	return b.Bytes(), err
}
