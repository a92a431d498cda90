package api

import (
	"errors"
	"io"
	"net/http"
)

// errBodyTooLarge reports a body over the configured limit.
var errBodyTooLarge = errors.New("request body too large")

// readBody reads the whole body into buf (reusing its capacity), up to
// limit bytes. Reading to the end, rather than decoding from the stream,
// lets net/http keep the connection alive for the next request.
func readBody(r *http.Request, buf []byte, limit int64) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return buf, nil
	}
	// One byte of room past a known length lets the final read see EOF
	// without growing the buffer.
	if n := r.ContentLength; n > 0 && int64(cap(buf)) <= n {
		buf = make([]byte, 0, n+1)
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return buf, errBodyTooLarge
		}
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
