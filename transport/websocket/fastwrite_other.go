//go:build !unix

package websocket

// tryWrite writes nothing where there is no raw socket write: every frame
// goes through the deadline-bounded net.Conn write (fastwrite_unix.go).
func (c *Conn) tryWrite([]byte) (int, error) { return 0, nil }
