package guard

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Listener takes WebSocket upgrade requests off the HTTP server's hands. net/http gives every connection a 4 KiB read and a 4 KiB write
// buffer and, once a handler hijacks the connection, never gets them back:
// at thousands of new connections a second that is half of all the memory
// an arrival allocates. Here the accept loop reads the first request line
// itself, with buffers from a pool; a GET of one of paths is parsed and
// served on the spot (through the same handler, so routing, admission and
// draining are unchanged) and its buffers go back to the pool after the
// upgrade. Any other connection goes on to the http.Server serving the
// Listener, which gets it from Accept with the bytes read so far put back
// in front.
//
// The handler of such a request sees a context.Background context and a
// ResponseWriter that supports Hijack and SetReadDeadline (through
// http.ResponseController); a handler that does not hijack has its answer
// written when it returns, and the connection closed.
type Listener struct {
	ln            net.Listener
	paths         []string
	handler       http.Handler
	idleTimeout   time.Duration
	headerTimeout time.Duration
	log           *slog.Logger

	others chan net.Conn // connections for the http.Server
	done   chan struct{}
	once   sync.Once
	wg     sync.WaitGroup // the accept loop and handshakes in flight

	mu       sync.Mutex
	inFlight map[net.Conn]struct{} // closed by Close

	readers sync.Pool // *bufio.Reader
	writers sync.Pool // *bufio.Writer
}

// upgradeBufSize is the size of the pooled buffers: a handshake's request
// is rarely past 1 KiB, and a longer one only needs more reads.
const upgradeBufSize = 4 << 10

// NewListener serves the upgrade requests for paths (GET of exactly one of
// them, any query) that arrive on ln with handler, and returns the other
// connections from Accept. A connection that sends nothing within
// idleTimeout is closed, and so is one whose request line, once begun, is
// not complete within headerTimeout. Close closes ln.
//
// The two are apart because HTTP clients open connections before they
// need them: Go's http.Transport dials when a request finds no idle
// connection and pools the new one unused if another comes free first, and
// it does not retry a request that fails on a connection's first use. A
// silent connection closed after the header timeout fails such a request
// with a bare EOF whenever the client picks it just as it closes. Silence
// is what an idle keep-alive connection gets (http.Server's IdleTimeout),
// and costs no more; a request that trickles in is what the header timeout
// bounds.
func NewListener(ln net.Listener, paths []string, handler http.Handler, idleTimeout, headerTimeout time.Duration, log *slog.Logger) *Listener {
	l := &Listener{
		ln: ln, paths: paths, handler: handler, idleTimeout: idleTimeout, headerTimeout: headerTimeout, log: log,
		others:   make(chan net.Conn),
		done:     make(chan struct{}),
		inFlight: make(map[net.Conn]struct{}),
	}
	l.readers.New = func() any { return bufio.NewReaderSize(nil, upgradeBufSize) }
	l.writers.New = func() any { return bufio.NewWriterSize(nil, upgradeBufSize) }
	l.wg.Add(1)
	go l.acceptLoop()
	return l
}

// Accept returns the next connection that is not a WebSocket upgrade.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.others:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Addr is the address of the listener NewListener was given.
func (l *Listener) Addr() net.Addr { return l.ln.Addr() }

// Close stops accepting, closes the connections whose handshake is still
// being read, and waits for the goroutines of the listener.
func (l *Listener) Close() error {
	var err error
	l.once.Do(func() {
		close(l.done)
		err = l.ln.Close()
		l.mu.Lock()
		for c := range l.inFlight {
			_ = c.Close()
		}
		l.mu.Unlock()
	})
	l.wg.Wait()
	return err
}

func (l *Listener) closed() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

func (l *Listener) acceptLoop() {
	defer l.wg.Done()
	var backoff time.Duration
	for {
		c, err := l.ln.Accept()
		if err != nil {
			if l.closed() {
				return
			}
			// As net/http does: out of descriptors and the like pass, so
			// wait and retry rather than stop serving.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			l.log.Error("http: accept", "error", err, "retry_in", backoff)
			select {
			case <-time.After(backoff):
			case <-l.done:
				return
			}
			continue
		}
		backoff = 0
		if !l.track(c) {
			_ = c.Close()
			return
		}
		l.wg.Add(1)
		go l.serve(c)
	}
}

// track registers c as in flight; false once the listener is closed.
func (l *Listener) track(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed() {
		return false
	}
	l.inFlight[c] = struct{}{}
	return true
}

func (l *Listener) untrack(c net.Conn) {
	l.mu.Lock()
	delete(l.inFlight, c)
	l.mu.Unlock()
}

// serve reads c's request line and either serves the upgrade or passes c
// on to the http.Server.
func (l *Listener) serve(c net.Conn) {
	defer l.wg.Done()
	defer l.untrack(c)
	br := l.readers.Get().(*bufio.Reader)
	br.Reset(c)
	defer func() {
		br.Reset(nil)
		l.readers.Put(br)
	}()
	// The first byte may take the idle timeout, the rest of the request
	// line the header timeout (see NewListener).
	_ = c.SetReadDeadline(time.Now().Add(l.idleTimeout))
	if _, err := br.Peek(1); err != nil {
		_ = c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(l.headerTimeout))
	line, ok, err := peekLine(br)
	if err != nil {
		// As net/http does with a request that does not come in time.
		_ = c.Close()
		return
	}
	if !ok || !l.isUpgrade(line) {
		l.passOn(c, br)
		return
	}
	req, err := http.ReadRequest(br)
	if err != nil {
		l.log.Debug("websocket handshake: bad request", "remote", c.RemoteAddr(), "error", err)
		_, _ = io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
		_ = c.Close()
		return
	}
	// The request's context is context.Background: nothing on the upgrade
	// path reads the server or local address values net/http puts there,
	// and a copy of the request to add them would cost an allocation.
	req.RemoteAddr = c.RemoteAddr().String()
	w := &upgradeWriter{l: l, c: c, br: br}
	l.handler.ServeHTTP(w, req)
	if w.bw != nil {
		w.bw.Reset(nil)
		l.writers.Put(w.bw)
	}
	if !w.hijacked {
		// Not upgraded: answer and close, as the admission checks do.
		w.finish()
		_ = c.Close()
	}
}

// peekLine returns the request line without consuming it; ok is false
// when it does not end within the buffer. An error means the client sent
// no complete line in time, or went away.
func peekLine(br *bufio.Reader) (line []byte, ok bool, err error) {
	for n := 1; ; n = br.Buffered() + 1 {
		if _, err := br.Peek(n); err != nil {
			return nil, false, err
		}
		b, _ := br.Peek(br.Buffered()) // all that came with the last read
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			return b[:i], true, nil
		}
		if len(b) >= br.Size() {
			return nil, false, nil
		}
	}
}

// isUpgrade reports whether line is "GET <path>[?query] HTTP/1.x" for one
// of l.paths: the only requests served here.
func (l *Listener) isUpgrade(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("GET "))
	if !ok {
		return false
	}
	for _, p := range l.paths {
		if r, ok := bytes.CutPrefix(rest, []byte(p)); ok && len(r) > 0 && (r[0] == ' ' || r[0] == '?') {
			return true
		}
	}
	return false
}

// passOn hands c to the http.Server with what br has read of it.
func (l *Listener) passOn(c net.Conn, br *bufio.Reader) {
	_ = c.SetReadDeadline(time.Time{})
	var pc net.Conn = c
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		pc = &prefixConn{Conn: c, prefix: bytes.Clone(b)}
	}
	select {
	case l.others <- pc:
	case <-l.done:
		_ = c.Close()
	}
}

// prefixConn reads prefix before the rest of the connection.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// upgradeWriter is the http.ResponseWriter of a request served by the
// Listener: a hijack for the upgrade, or a short answer (a refusal)
// written when the handler returns.
type upgradeWriter struct {
	l        *Listener
	c        net.Conn
	br       *bufio.Reader
	bw       *bufio.Writer // from the pool once hijacked
	header   http.Header
	status   int
	body     bytes.Buffer
	hijacked bool
}

func (w *upgradeWriter) Header() http.Header {
	if w.header == nil {
		w.header = make(http.Header)
	}
	return w.header
}

func (w *upgradeWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *upgradeWriter) Write(p []byte) (int, error) {
	if w.hijacked {
		return 0, http.ErrHijacked
	}
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}

// SetReadDeadline serves http.ResponseController.
func (w *upgradeWriter) SetReadDeadline(t time.Time) error { return w.c.SetReadDeadline(t) }

// Hijack hands over the connection with the pooled buffers; they must not
// be used once the handler has returned (the WebSocket transport copies
// what it still needs).
func (w *upgradeWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if w.hijacked {
		return nil, nil, http.ErrHijacked
	}
	w.hijacked = true
	_ = w.c.SetDeadline(time.Time{})
	w.bw = w.l.writers.Get().(*bufio.Writer)
	w.bw.Reset(w.c)
	return w.c, bufio.NewReadWriter(w.br, w.bw), nil
}

// finish writes the answer of a handler that did not hijack.
func (w *upgradeWriter) finish() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	bw := w.l.writers.Get().(*bufio.Writer)
	defer func() {
		bw.Reset(nil)
		w.l.writers.Put(bw)
	}()
	bw.Reset(w.c)
	_ = w.c.SetWriteDeadline(time.Now().Add(w.l.headerTimeout))
	fmt.Fprintf(bw, "HTTP/1.1 %d %s\r\n", w.status, http.StatusText(w.status))
	h := w.Header()
	h.Del("Transfer-Encoding")
	h.Set("Content-Length", strconv.Itoa(w.body.Len()))
	h.Set("Connection", "close")
	if err := h.Write(bw); err != nil {
		return
	}
	_, _ = bw.WriteString("\r\n")
	_, _ = bw.Write(w.body.Bytes())
	if err := bw.Flush(); err != nil && !errors.Is(err, net.ErrClosed) {
		w.l.log.Debug("websocket handshake: answer", "remote", w.c.RemoteAddr(), "error", err)
	}
}
