package wire

import "sync"

// maxPooledBuffer keeps a pool from holding on to the buffers of rare huge
// messages.
const maxPooledBuffer = 64 << 10

// Buffers pools the buffers an engine encodes outgoing messages into, so
// that publishing allocates none in the steady state. The zero value is
// ready to use; it must not be copied after first use.
type Buffers struct {
	pool sync.Pool // *[]byte
}

// Get returns an empty buffer. Pointers are pooled rather than slices so
// that Put does not allocate.
func (p *Buffers) Get() *[]byte {
	if b, ok := p.pool.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 0, 1024)
	return &b
}

// Put returns b to the pool; the caller must not use it afterwards.
func (p *Buffers) Put(b *[]byte) {
	if cap(*b) <= maxPooledBuffer {
		*b = (*b)[:0]
		p.pool.Put(b)
	}
}
