package loadgen

import (
	"slices"
	"sync/atomic"
	"time"
)

// ServerClose is a connection the server closed with a close frame, and
// what this tool's reader knew of the connection by then. A server that
// cuts clients it judges not to be reading (Herald's 3008 and 3009) judges
// by the bytes the client's kernel acknowledged, and the kernel of a
// client whose receive buffer filled up advertises no window again until
// the client read about a sixteenth of that buffer (receiver-side silly
// window avoidance): a reader that takes its connections' bytes a share at
// a time, as this tool does under overload, can read for seconds without
// the server seeing any of it. RcvBuf, Unread and Turn say whether that or
// a starved reader is what the server saw.
type ServerClose struct {
	// Worker and Sub name the subscriber: its worker process (set by the
	// Rig) and its index there.
	Worker int    `json:"worker"`
	Sub    int    `json:"sub"`
	Code   int    `json:"code"`
	Reason string `json:"reason,omitempty"`
	// At is when the close frame was read (Clock ns). The frame arrives
	// after everything the server sent before it, so this is when the
	// reader got through that backlog, not when the server decided.
	At int64 `json:"at"`
	// RcvBuf is the socket's receive buffer (SO_RCVBUF, as the kernel
	// grew it) when the close was read; 0 where it cannot be read.
	RcvBuf int `json:"rcvbuf,omitempty"`
	// Unread is the longest time the reader left the connection with
	// bytes waiting in its socket, having read its share of a turn.
	Unread time.Duration `json:"unread,omitempty"`
	// Turn is the longest turn of the connection's reader (one pass over
	// its ready connections) before the close.
	Turn time.Duration `json:"turn,omitempty"`
}

// maxServerCloses bounds the closes a pool keeps: the first ones explain
// a run; a server that closes thousands says so in the counters.
const maxServerCloses = 16

// noteServerClose keeps sc, unless maxServerCloses are kept already.
func (p *connStats) noteServerClose(sc ServerClose) {
	p.errMu.Lock()
	defer p.errMu.Unlock()
	if len(p.closes) < maxServerCloses {
		p.closes = append(p.closes, sc)
	}
}

// ServerCloses returns the first closes the server sent, in the order
// they were read.
func (p *connStats) ServerCloses() []ServerClose {
	p.errMu.Lock()
	defer p.errMu.Unlock()
	return slices.Clone(p.closes)
}

// storeMax raises a to v if v is larger.
func storeMax(a *atomic.Int64, v int64) {
	for cur := a.Load(); v > cur && !a.CompareAndSwap(cur, v); cur = a.Load() {
	}
}

// TakeReaderSpans returns the longest turn of any of the pool's readers
// and the longest any connection waited unread with bytes in its socket,
// since the last call (light clients only; zero for the others).
func (p *Pool) TakeReaderSpans() (turn, unread time.Duration) {
	for _, s := range p.shards {
		t, u := s.takeSpans()
		turn, unread = max(turn, t), max(unread, u)
	}
	return turn, unread
}
