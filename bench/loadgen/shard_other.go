//go:build !linux

package loadgen

import (
	"errors"
	"syscall"
	"time"
)

// The pool reads its connections through epoll, so it runs on Linux only.
type shard struct {
	id   int
	done chan struct{}
}

var errNotLinux = errors.New("the load tool's connection pool needs Linux (epoll)")

func defaultShards() int                              { return 1 }
func newShard(*Pool, int) (*shard, error)             { return nil, errNotLinux }
func (s *shard) adopt(*Conn) error                    { return errNotLinux }
func (s *shard) loop()                                {}
func (s *shard) stop()                                {}
func (s *shard) drain() []*Conn                       { return nil }
func (s *shard) takeSpans() (_, _ time.Duration)      { return 0, 0 }
func bindNoPort(_, _ string, _ syscall.RawConn) error { return nil }
