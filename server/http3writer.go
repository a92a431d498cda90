package server

import (
	"net/http"

	"github.com/quic-go/quic-go/http3"
)

// h3Writer is a ResponseWriter of an HTTP/3 request. It drops the
// connection-specific header fields HTTP/3 forbids (RFC 9114, 4.2), which
// handlers written for HTTP/1.1 set ("Connection: close" on a stream or a
// refusal): an HTTP/3 client treats a response that carries one as
// malformed. It passes on what the writer underneath offers: Flush and the
// deadlines (through Unwrap, for http.ResponseController), and what
// webtransport-go's Upgrade asserts.
type h3Writer struct {
	http.ResponseWriter
	wrote bool
}

func (w *h3Writer) strip() {
	if w.wrote {
		return
	}
	w.wrote = true
	h := w.Header()
	for _, k := range []string{"Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "Upgrade"} {
		delete(h, k)
	}
}

func (w *h3Writer) WriteHeader(code int) {
	if code >= 200 || code == http.StatusSwitchingProtocols {
		w.strip()
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *h3Writer) Write(p []byte) (int, error) {
	w.strip()
	return w.ResponseWriter.Write(p)
}

func (w *h3Writer) Flush() {
	w.strip()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *h3Writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// HTTPStream, ReceivedSettings and Settings are what webtransport-go's
// Upgrade needs of the writer.
func (w *h3Writer) HTTPStream() *http3.Stream {
	return w.ResponseWriter.(http3.HTTPStreamer).HTTPStream()
}

func (w *h3Writer) ReceivedSettings() <-chan struct{} {
	return w.ResponseWriter.(http3.Settingser).ReceivedSettings()
}

func (w *h3Writer) Settings() *http3.Settings {
	return w.ResponseWriter.(http3.Settingser).Settings()
}
