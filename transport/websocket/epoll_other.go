//go:build !linux

package websocket

import "errors"

// EpollAvailable reports whether PollerEpoll can run on this system.
const EpollAvailable = false

// newEpollPath is unreachable off Linux: Poller.Resolve refuses epoll.
func newEpollPath(*Server) (readPath, error) {
	return nil, errors.New("epoll needs Linux")
}
