package websocket

import "golang.org/x/sys/unix"

// Delivered is how many bytes the client has taken from the connection so
// far, as the kernel counts them (TCP's bytes_acked: what reached the
// client's side), and false where it cannot be read. A write that waits
// says only that the socket's buffer is full; whether the client is
// reading is whether this number moves (hub.DeliveryReporter).
func (c *Conn) Delivered() (uint64, bool) {
	if c.rc == nil {
		return 0, false
	}
	var info *unix.TCPInfo
	var err error
	if cerr := c.rc.Control(func(fd uintptr) {
		info, err = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	}); cerr != nil || err != nil {
		return 0, false
	}
	return info.Bytes_acked, true
}

// Unacknowledged is how many bytes written to the socket the client has
// not yet acknowledged, sent or not (the kernel's SIOCOUTQ), and false
// where it cannot be read (hub.SendQueueReporter).
func (c *Conn) Unacknowledged() (int, bool) {
	if c.rc == nil {
		return 0, false
	}
	var n int
	var err error
	if cerr := c.rc.Control(func(fd uintptr) {
		n, err = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ)
	}); cerr != nil || err != nil {
		return 0, false
	}
	return n, true
}
