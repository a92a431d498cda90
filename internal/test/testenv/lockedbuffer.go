package testenv

import (
	"bytes"
	"sync"
)

// LockedBuffer collects output that other goroutines write while the test
// reads it: a process's output copied by exec, or the log of a server under
// test.
type LockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *LockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
