package websocket

import "time"

// WriteProgressTimeout is websocket.write_timeout: a write fails when the
// client took less than minWriteProgress within it, and the hub does not
// cut a detached write as slow sooner (hub.WriteProgressBounder).
func (c *Conn) WriteProgressTimeout() time.Duration { return c.srv.cfg.WriteTimeout }
