//go:build unix

package websocket

import (
	"errors"
	"sync"
	"syscall"
)

// tryWrite makes one non-blocking write of b straight to the socket of an
// epoll connection, without arming the write deadline: setting a deadline
// costs a runtime timer update per write, about 5% of the CPU of a large
// fan-out, and a write to a socket with room in its buffer never waits. It
// returns how much was written and, when the socket's buffer is full
// (EAGAIN) or the connection has no raw socket, leaves the rest to the
// caller's deadline-bounded write.
func (c *Conn) tryWrite(b []byte) (int, error) {
	if c.rc == nil {
		return 0, nil
	}
	w := rawWrites.Get().(*rawWrite)
	w.b = b
	err := c.rc.Write(w.fn)
	n, werr := max(w.n, 0), w.err
	w.b, w.n, w.err = nil, 0, nil
	rawWrites.Put(w)
	if err != nil {
		return n, err
	}
	if werr != nil && !errors.Is(werr, syscall.EAGAIN) {
		return n, werr
	}
	return n, nil
}

// rawWrite carries one tryWrite through syscall.RawConn.Write. Its fn is
// bound once, so a write allocates no closure; the pool only recycles them.
type rawWrite struct {
	b   []byte
	n   int
	err error
	fn  func(fd uintptr) bool
}

var rawWrites = sync.Pool{New: func() any {
	w := &rawWrite{}
	w.fn = w.write
	return w
}}

func (w *rawWrite) write(fd uintptr) bool {
	for {
		w.n, w.err = syscall.Write(int(fd), w.b)
		if w.err != syscall.EINTR {
			return true // never wait here: the caller waits with a deadline
		}
	}
}
