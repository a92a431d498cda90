package websocket

import "time"

// WriteProgressTimeout is the longest a write waits while the client takes
// less than minWriteProgress: websocket.write_timeout, readerStallWindows
// times over for a client that had been reading (pace.go). The hub does not
// cut a detached write as slow sooner (hub.WriteProgressBounder): the
// transport's own rule, which tells a reader that paused from one that
// never read, decides first.
func (c *Conn) WriteProgressTimeout() time.Duration {
	return readerStallWindows * c.srv.cfg.WriteTimeout
}
