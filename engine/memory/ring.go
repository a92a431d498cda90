package memory

import "github.com/heraldhq/herald/engine"

// ring is a FIFO of publications that grows on demand up to the stream's
// size limit, so a channel configured with a large history_size but few
// publications does not reserve the whole buffer up front.
type ring struct {
	buf  []*engine.Publication
	head int // index of the oldest element
	n    int
}

// push appends p, first dropping the oldest elements so that at most max
// remain afterwards.
func (r *ring) push(p *engine.Publication, max int) {
	for r.n >= max && r.n > 0 {
		r.popFront()
	}
	if r.n == len(r.buf) {
		r.grow(max)
	}
	r.buf[(r.head+r.n)%len(r.buf)] = p
	r.n++
}

// grow is called only when the buffer is full and n < max, so the new size
// is always larger than the old one.
func (r *ring) grow(max int) {
	size := 2 * len(r.buf)
	if size < 8 {
		size = 8
	}
	if size > max {
		size = max
	}
	buf := make([]*engine.Publication, size)
	for i := 0; i < r.n; i++ {
		buf[i] = r.at(i)
	}
	r.buf, r.head = buf, 0
}

func (r *ring) popFront() {
	r.buf[r.head] = nil // let the publication be collected
	r.head = (r.head + 1) % len(r.buf)
	r.n--
}

// at returns the i-th oldest element, 0 <= i < n.
func (r *ring) at(i int) *engine.Publication {
	return r.buf[(r.head+i)%len(r.buf)]
}

// clear drops every element and releases the buffer.
func (r *ring) clear() {
	*r = ring{}
}
