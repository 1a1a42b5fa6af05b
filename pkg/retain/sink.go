package retain

import (
	"bytes"
	"context"
	"io"
	"os"
	"runtime"
	"sync"

	seekable "github.com/SaveTheRbtz/zstd-seekable-format-go/pkg"
	"github.com/klauspost/compress/zstd"
)

// A sink stores a value's bytes in its temporary content file: as they are
// (plainSink) or as seekable zstd (zstdSink). Write reports how many bytes
// it accepted; ReadBack reproduces every accepted byte, so that a failed
// retain can still print its input unchanged.
type sink interface {
	Write(p []byte) (int, error)
	// Finish completes the file (a zstd trailer) and returns its size. It
	// does not sync it: the backend does, where and when the file becomes
	// the value's.
	Finish() (int64, error)
	ReadBack(out io.Writer) error
	File() *os.File
	Compression() Compression
}

type plainSink struct {
	f       *os.File
	out     writeback
	written int64
}

// newPlainSink writes f; start, when not nil, starts the writeback of
// what was written (see writeback).
func newPlainSink(f *os.File, start func(f *os.File, off, n int64)) *plainSink {
	return &plainSink{f: f, out: writeback{f: f, start: start}}
}

func (s *plainSink) Write(p []byte) (int, error) {
	n, err := s.out.Write(p)
	s.written += int64(n)
	return n, err
}

func (s *plainSink) Finish() (int64, error) { return s.written, nil }

func (s *plainSink) ReadBack(out io.Writer) error {
	_, err := io.Copy(out, io.NewSectionReader(s.f, 0, s.written))
	return err
}

func (s *plainSink) File() *os.File           { return s.f }
func (s *plainSink) Compression() Compression { return CompressNone }

// writeback writes a content file and starts the writeback of what it
// wrote every writebackStep bytes (fsx.StartWriteback), so that the fsync
// at the end waits for the last few MiB instead of the whole value, and
// the kernel never holds a whole large value as dirty pages: a 1 GiB
// retain that did had to wait, now and then, for seconds while the kernel
// throttled it (bench/run's retain row, 0.93–2.35 s; started as it goes,
// 0.72–0.80 s).
type writeback struct {
	f                *os.File
	start            func(f *os.File, off, n int64)
	written, started int64
	// failed, when not nil, is closed at the first failed write.
	failed chan struct{}
}

const writebackStep = 8 << 20

func (w *writeback) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil && w.failed != nil {
		select {
		case <-w.failed:
		default:
			close(w.failed)
		}
	}
	w.written += int64(n)
	if w.start != nil && w.written-w.started >= writebackStep {
		w.start(w.f, w.started, w.written-w.started)
		w.started = w.written
	}
	return n, err
}

// FrameSize is the uncompressed size of each frame of a zstd value. Frames
// are independent, so a read decodes only the frames it needs; 256 KiB
// keeps the ratio within a few percent of one long stream.
const FrameSize = 256 << 10

// compressors is how many frames are compressed at once: every core, up
// to 4, so that memory (each encoder keeps its own tables) stays bounded on
// big machines.
var compressors = min(runtime.GOMAXPROCS(0), 4)

// zstdEncoder is shared: EncodeAll is safe for concurrent use, with one
// encoder per core (the default concurrency).
var zstdEncoder = sync.OnceValue(func() *zstd.Encoder {
	e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderCRC(true),
		zstd.WithEncoderConcurrency(compressors),
		zstd.WithWindowSize(FrameSize))
	if err != nil {
		panic(err) // only for invalid options
	}
	return e
})

// frameEncoder compresses each frame into a buffer used again once the
// frame is written. The seekable writer asks for a new buffer for every
// frame (EncodeAll with a nil dst, which klauspost sizes as the frame: 256
// KiB), so a 1 GiB value made 1 GiB of garbage; the collector ran 78 times
// and let the heap grow to twice what was live (43 MB peak RSS for a
// retain --compress zstd of 1 GiB).
type frameEncoder struct {
	enc  *zstd.Encoder
	mu   sync.Mutex
	out  map[*byte][]byte // a frame's compressed bytes, by its source's first byte, until written
	free [][]byte
	made int // buffers made
}

func (e *frameEncoder) EncodeAll(src, dst []byte) []byte {
	if len(src) == 0 || dst != nil {
		return e.enc.EncodeAll(src, dst)
	}
	e.mu.Lock()
	if n := len(e.free); n > 0 {
		dst, e.free = e.free[n-1], e.free[:n-1]
	}
	e.mu.Unlock()
	if dst == nil {
		dst = make([]byte, 0, FrameSize)
		e.mu.Lock()
		e.made++
		e.mu.Unlock()
	}
	out := e.enc.EncodeAll(src, dst)
	e.mu.Lock()
	e.out[&src[0]] = out
	e.mu.Unlock()
	return out
}

// written takes back the buffer of the frame whose source was src: the
// writer is done with it.
func (e *frameEncoder) written(src []byte) {
	if len(src) == 0 {
		return
	}
	e.mu.Lock()
	if b, ok := e.out[&src[0]]; ok {
		delete(e.out, &src[0])
		e.free = append(e.free, b[:0])
	}
	e.mu.Unlock()
}

// zstdSink compresses frames on all cores (seekable.Writer.WriteMany) and
// writes them in order, then the seek table.
type zstdSink struct {
	f      *os.File
	sw     *seekable.Writer
	enc    *frameEncoder
	frames chan []byte
	// queue is frames, kept after stop closes it: frames queued that the
	// compressor never took are still there for ReadBack.
	queue chan []byte
	done  chan error
	cur   []byte

	mu      sync.Mutex
	pending [][]byte                    // sourced, not yet written, in order
	written []seekable.FrameOffsetEntry // written frames
	free    [][]byte
	failed  error
}

func newZstdSink(f *os.File, start func(f *os.File, off, n int64)) (*zstdSink, error) {
	enc := &frameEncoder{enc: zstdEncoder(), out: make(map[*byte][]byte)}
	wb := &writeback{f: f, start: start, failed: make(chan struct{})}
	sw, err := seekable.NewWriter(wb, enc)
	if err != nil {
		return nil, err
	}
	frames := make(chan []byte, 4)
	s := &zstdSink{f: f, sw: sw, enc: enc, frames: frames, queue: frames, done: make(chan error, 1)}
	// A frame write that failed ends the compressor: WriteMany returns only
	// once the source does, and the source would otherwise wait for a
	// frame the writer will never take. The frames not taken stay in the
	// queue for ReadBack.
	source := func() ([]byte, error) {
		var b []byte
		var ok bool
		select {
		case b, ok = <-frames:
		case <-wb.failed:
		}
		if !ok {
			return nil, nil
		}
		s.mu.Lock()
		s.pending = append(s.pending, b)
		s.mu.Unlock()
		return b, nil
	}
	written := func(e seekable.FrameOffsetEntry) {
		s.mu.Lock()
		s.written = append(s.written, e)
		enc.written(s.pending[0])
		s.free = append(s.free, s.pending[0])
		s.pending = s.pending[1:]
		s.mu.Unlock()
	}
	go func() {
		s.done <- sw.WriteMany(context.Background(), source, seekable.WithWriteCallback(written), seekable.WithConcurrency(compressors))
	}()
	return s, nil
}

func (s *zstdSink) buffer() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.free); n > 0 {
		b := s.free[n-1]
		s.free = s.free[:n-1]
		return b[:0]
	}
	return make([]byte, 0, FrameSize)
}

// Write copies p into frames; every byte of p is accepted (and reproduced
// by ReadBack) even when the compressor has failed.
func (s *zstdSink) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if s.cur == nil {
			s.cur = s.buffer()
		}
		k := min(len(p), FrameSize-len(s.cur))
		s.cur = append(s.cur, p[:k]...)
		p = p[k:]
		if len(s.cur) == FrameSize {
			if err := s.push(); err != nil {
				s.cur = append(s.cur, p...) // kept for ReadBack
				return n, err
			}
		}
	}
	return n, nil
}

func (s *zstdSink) push() error {
	if s.failed != nil {
		return s.failed
	}
	select {
	case s.frames <- s.cur:
		s.cur = nil
		return nil
	case err := <-s.done:
		if err == nil {
			err = io.ErrClosedPipe
		}
		s.failed = err
		return err
	}
}

// stop ends the compressor and returns its error.
func (s *zstdSink) stop() error {
	if s.frames == nil {
		return s.failed
	}
	close(s.frames)
	s.frames = nil
	if s.failed != nil {
		return s.failed
	}
	err := <-s.done
	if err != nil {
		s.failed = err
	}
	return err
}

func (s *zstdSink) Finish() (int64, error) {
	if len(s.cur) > 0 {
		if err := s.push(); err != nil {
			return 0, err
		}
	}
	if err := s.stop(); err != nil {
		return 0, err
	}
	if err := s.sw.Close(); err != nil {
		return 0, err
	}
	fi, err := s.f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// ReadBack writes every accepted byte: written frames decoded from the
// file, then frames not yet written, then the frame being filled.
func (s *zstdSink) ReadBack(out io.Writer) error {
	// Stop the compressor first, then take the frames it never sourced:
	// with it gone, nothing else receives, so their order is kept.
	// (stop may have closed it already: a frame sent after the compressor
	// failed sits in the channel's buffer all the same.)
	var queued [][]byte
	if ch := s.frames; ch != nil {
		close(ch)
		s.frames = nil
		if s.failed == nil {
			s.failed = <-s.done
		}
	}
	for b := range s.queue {
		queued = append(queued, b)
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(4*FrameSize))
	if err != nil {
		return err
	}
	defer dec.Close()
	s.mu.Lock()
	written, pending := s.written, s.pending
	s.mu.Unlock()
	var dst []byte
	for _, e := range written {
		src := make([]byte, e.CompressedSize)
		if _, err := s.f.ReadAt(src, int64(e.CompressedOffset)); err != nil {
			return err
		}
		if dst, err = dec.DecodeAll(src, dst[:0]); err != nil {
			return err
		}
		if _, err := out.Write(dst); err != nil {
			return err
		}
	}
	for _, b := range append(append(pending, queued...), s.cur) {
		if _, err := io.Copy(out, bytes.NewReader(b)); err != nil {
			return err
		}
	}
	return nil
}

func (s *zstdSink) File() *os.File           { return s.f }
func (s *zstdSink) Compression() Compression { return CompressZstd }

// worthCompressing is the auto rule: the first 256 KiB compress at least
// 1.5×.
func worthCompressing(head []byte) bool {
	sample := head[:min(len(head), 256<<10)]
	c := zstdEncoder().EncodeAll(sample, nil)
	return float64(len(sample)) >= 1.5*float64(len(c))
}
