package websocket

import (
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsflate"
)

// permessage-deflate (RFC 7692) is negotiated without context takeover in
// either direction: every message is compressed and decompressed on its
// own, so a connection keeps no compressor or decompressor between
// messages. Both are borrowed from pools for one message at a time, and an
// idle connection costs the same with compression as without (one flag in
// Conn). The price is a worse ratio for a stream of small similar
// messages, which a shared window would have compressed better.
//
// The codec is the standard library's compress/flate: at levels 1 and 2
// github.com/klauspost/compress stores messages of a few hundred bytes
// uncompressed (a typical 500-byte publication came out 10 bytes larger),
// and such messages are what Herald sends most.

// deflateParams is what the server accepts and answers: no context
// takeover either way, and the default (32 KiB) windows.
var deflateParams = wsflate.Parameters{ServerNoContextTakeover: true, ClientNoContextTakeover: true}

// Compression levels of Config.CompressionLevel.
const (
	MinCompressionLevel     = flate.BestSpeed       // 1
	MaxCompressionLevel     = flate.BestCompression // 9
	DefaultCompressionLevel = flate.BestSpeed
)

// deflater compresses one outgoing message into out.
type deflater struct {
	w   *wsflate.Writer
	out writeBuf
}

// compress returns msg compressed as a permessage-deflate payload (the
// trailing 0x00 0x00 0xff 0xff removed). The result lives in d until d is
// put back.
func (d *deflater) compress(msg []byte) ([]byte, error) {
	d.out.b = d.out.b[:0]
	d.w.Reset(&d.out)
	if _, err := d.w.Write(msg); err != nil {
		return nil, fmt.Errorf("deflate: %w", err)
	}
	if err := d.w.Flush(); err != nil {
		return nil, fmt.Errorf("deflate: %w", err)
	}
	return d.out.b, nil
}

// inflater decompresses one incoming message into out, up to a limit.
//
// It does not use wsflate.Reader: with a source that has ReadByte (as
// bytes.Reader has, and flate wants to avoid a bufio.Reader per message),
// wsflate v1.5.0 returns a zero byte instead of moving on to the tail it
// appends, which corrupts every message. The message and the tail are
// copied into in instead, and flate reads them through src.
type inflater struct {
	fr  io.ReadCloser // flate's reader, a flate.Resetter
	in  []byte        // the compressed message and the tail
	src bytes.Reader
	out []byte
}

// inflateTail ends a permessage-deflate payload for a flate reader: the
// sync-flush marker the sender removed (RFC 7692 section 7.2.2), then an
// empty final stored block so that the reader stops with io.EOF.
var inflateTail = []byte{0x00, 0x00, 0xff, 0xff, 0x01, 0x00, 0x00, 0xff, 0xff}

var (
	errInflatedTooBig = errors.New("message too big once decompressed")
	errBadDeflate     = errors.New("invalid compressed message")
)

// inflate returns payload decompressed. It stops reading once the output
// exceeds limit, so a small message that inflates to a huge one (a
// decompression bomb) costs at most limit bytes; it then returns
// errInflatedTooBig. The result lives in f until f is put back.
func (f *inflater) inflate(payload []byte, limit int64) ([]byte, error) {
	f.in = append(append(f.in[:0], payload...), inflateTail...)
	f.src.Reset(f.in)
	if err := f.fr.(flate.Resetter).Reset(&f.src, nil); err != nil {
		return nil, fmt.Errorf("%w: %v", errBadDeflate, err)
	}
	out := f.out[:0]
	for {
		if len(out) == cap(out) {
			if int64(len(out)) > limit {
				f.out = out[:0]
				return nil, errInflatedTooBig
			}
			// Grow up to one byte past the limit, which is enough to
			// tell a message that is too big.
			n := min(max(2*cap(out), initialReadBuf), int(limit)+1)
			out = append(out[:cap(out)], make([]byte, n-cap(out))...)[:len(out)]
		}
		n, err := f.fr.Read(out[len(out):cap(out)])
		out = out[:len(out)+n]
		if int64(len(out)) > limit {
			f.out = out[:0]
			return nil, errInflatedTooBig
		}
		if err == io.EOF {
			f.out = out[:0]
			return out, nil
		}
		if err != nil {
			f.out = out[:0]
			return nil, fmt.Errorf("%w: %v", errBadDeflate, err)
		}
	}
}

// compressionPools hold the deflaters and inflaters of a Server; nil pools
// when compression is off.
type compressionPools struct {
	deflaters sync.Pool // *deflater
	inflaters sync.Pool // *inflater
}

func newCompressionPools(level int) *compressionPools {
	p := &compressionPools{}
	p.deflaters.New = func() any {
		return &deflater{w: wsflate.NewWriter(nil, func(w io.Writer) wsflate.Compressor {
			fw, err := flate.NewWriter(w, level)
			if err != nil {
				// NewServer has checked the level.
				panic(fmt.Sprintf("websocket: flate level %d: %v", level, err))
			}
			return fw
		})}
	}
	p.inflaters.New = func() any {
		f := &inflater{}
		f.fr = flate.NewReader(&f.src)
		return f
	}
	return p
}

func (p *compressionPools) getDeflater() *deflater { return p.deflaters.Get().(*deflater) }

func (p *compressionPools) putDeflater(d *deflater) {
	if cap(d.out.b) > maxPooledBuf {
		d.out.b = nil
	}
	p.deflaters.Put(d)
}

func (p *compressionPools) getInflater() *inflater { return p.inflaters.Get().(*inflater) }

func (p *compressionPools) putInflater(f *inflater) {
	if cap(f.out) > maxPooledBuf {
		f.out = nil
	}
	if cap(f.in) > maxPooledBuf {
		f.in = nil
	}
	f.src.Reset(nil)
	p.inflaters.Put(f)
}

// compressedRsv is the RSV1 bit that marks a compressed message.
var compressedRsv = ws.Rsv(true, false, false)
