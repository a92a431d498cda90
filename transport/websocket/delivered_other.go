//go:build !linux

package websocket

// Delivered reports false: only Linux's tcp_info counts what the client
// took, and elsewhere a write's own progress is all there is to go on.
func (c *Conn) Delivered() (uint64, bool) { return 0, false }

// Unacknowledged reports false: the send queue is read with a Linux ioctl.
func (c *Conn) Unacknowledged() (int, bool) { return 0, false }
