package retain

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"runtime"
	"slices"
	"sync"

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
}

const writebackStep = 8 << 20

func (w *writeback) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.written += int64(n)
	if w.start != nil && w.written-w.started >= writebackStep {
		w.start(w.f, w.started, w.written-w.started)
		w.started = w.written
	}
	return n, err
}

// FrameSize is the uncompressed size of each frame of a zstd value. Frames
// are independent, so a read decodes only the frames it needs; 256 KiB
// keeps the ratio within a few percent of one long stream. Larger frames
// would not compress faster: klauspost's encoder runs at the same speed on
// 256 KiB, 1 MiB and 4 MiB frames (docs/BENCHMARKS.md).
const FrameSize = 256 << 10

// compressWorkers is how many frames are compressed at once: every core,
// up to 8. The SHA-256 of the same bytes runs on one core at about 2 GB/s,
// which 8 compressors at 250–400 MB/s each already match, so more would
// only hold more memory: each worker's encoder keeps about 2.7 MiB (its
// match tables and history) and its two frames 0.5 MiB each, so the
// pipeline holds at most 8.4 MiB on 2 cores and 31 MiB on 8 or more,
// whatever the value's size.
var compressWorkers = min(runtime.GOMAXPROCS(0), 8)

// zstdEncoder is shared: EncodeAll is safe for concurrent use, with one
// encoder per worker. Its output depends on the frame alone, never on
// which encoder or worker made it, so a value's bytes are the same on any
// number of cores. Frames carry their checksum (the low 32 bits of the
// XXH64 of their bytes), which the seek table repeats.
var zstdEncoder = sync.OnceValue(func() *zstd.Encoder {
	e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderCRC(true),
		zstd.WithEncoderConcurrency(compressWorkers),
		zstd.WithWindowSize(FrameSize))
	if err != nil {
		panic(err) // only for invalid options
	}
	return e
})

// errSinkStopped is the cause a stopped pipeline reports: the retain
// dropped its content file.
var errSinkStopped = errors.New("retain: zstd sink stopped")

// zframe is one frame on its way through the pipeline: filled by Write,
// compressed by a worker, written by the writer, then used again.
type zframe struct {
	seq   int64 // its place among the value's frames; -1 while being filled
	src   []byte
	dst   []byte        // src compressed, once ready has been sent
	ready chan struct{} // capacity 1: the worker's word that dst is done
}

// seekEntry is a written frame's entry in the seek table.
type seekEntry struct {
	off                int64 // where the frame starts in the file
	size, usize, check uint32
}

// zstdSink writes a seekable zstd file. Write cuts the value into frames
// of FrameSize bytes; compressWorkers workers compress them, in any order,
// and one writer writes them in the value's order, then Finish writes the
// seek table. At most depth frames exist, so memory is bounded whatever the
// value's size: a Write waits for a free frame when compression falls
// behind.
type zstdSink struct {
	f   *os.File
	out io.Writer // f, through its writeback

	ctx  context.Context
	stop context.CancelCauseFunc // ends the pipeline: by its writer on a failed write, or by abort
	wg   sync.WaitGroup

	depth int
	all   []*zframe    // every frame made, at most depth
	jobs  chan *zframe // to the workers
	order chan *zframe // to the writer, in the value's order
	free  chan *zframe // written frames, to be filled again
	cur   *zframe      // the frame Write is filling
	sent  int64        // frames pushed
	shut  bool         // jobs and order are closed
	err   error        // the pipeline's error, once Write or Finish saw it
	rest  []byte       // bytes accepted after the pipeline failed, for ReadBack

	entries []seekEntry // the writer's until wg.Wait returns
	offset  int64       // the writer's: bytes of frames written
}

func newZstdSink(f *os.File, start func(f *os.File, off, n int64)) *zstdSink {
	return newZstdSinkTo(f, &writeback{f: f, start: start}, compressWorkers)
}

// newZstdSinkTo writes frames and the seek table to out (f, or a test's
// writer in front of it) with the given number of workers. ReadBack reads
// the frames written back from f.
func newZstdSinkTo(f *os.File, out io.Writer, workers int) *zstdSink {
	depth := 2*workers + 2 // a frame per worker, as many queued, one being written, one being filled
	s := &zstdSink{f: f, out: out, depth: depth,
		jobs: make(chan *zframe, depth), order: make(chan *zframe, depth), free: make(chan *zframe, depth)}
	s.ctx, s.stop = context.WithCancelCause(context.Background())
	enc := zstdEncoder()
	for range workers {
		s.wg.Go(func() { s.compress(enc) })
	}
	s.wg.Go(s.write)
	return s
}

// compress is a worker: it compresses frames until there are no more or
// the pipeline stops.
func (s *zstdSink) compress(enc *zstd.Encoder) {
	for {
		select {
		case <-s.ctx.Done():
			return
		case f, ok := <-s.jobs:
			if !ok {
				return
			}
			f.dst = enc.EncodeAll(f.src, f.dst[:0])
			f.ready <- struct{}{}
		}
	}
}

// write is the writer: it writes the frames in order as they are
// compressed. A failed write stops the pipeline with its error; a stopped
// pipeline writes no frame after the one under way.
func (s *zstdSink) write() {
	for s.ctx.Err() == nil {
		var f *zframe
		select {
		case <-s.ctx.Done():
			return
		case next, ok := <-s.order:
			if !ok {
				return
			}
			f = next
		}
		select {
		case <-s.ctx.Done():
			return
		case <-f.ready:
		}
		n, err := s.out.Write(f.dst)
		if err == nil && n < len(f.dst) {
			err = io.ErrShortWrite
		}
		if err != nil {
			s.stop(err)
			return
		}
		s.entries = append(s.entries, seekEntry{off: s.offset, size: uint32(n), usize: uint32(len(f.src)),
			check: binary.LittleEndian.Uint32(f.dst[n-4:])}) // the frame's checksum ends it
		s.offset += int64(n)
		s.free <- f
	}
}

// frame returns an empty frame to fill: a written one, or a new one while
// fewer than depth exist, or it waits for one to be written.
func (s *zstdSink) frame() (*zframe, error) {
	if s.ctx.Err() != nil {
		return nil, context.Cause(s.ctx)
	}
	var f *zframe
	select {
	case f = <-s.free:
	default:
		if len(s.all) < s.depth {
			f = &zframe{src: make([]byte, 0, FrameSize), ready: make(chan struct{}, 1)}
			s.all = append(s.all, f)
			break
		}
		select {
		case f = <-s.free:
		case <-s.ctx.Done():
			return nil, context.Cause(s.ctx)
		}
	}
	f.seq, f.src = -1, f.src[:0]
	return f, nil
}

// push hands the frame being filled to the workers and the writer. It
// never waits: with at most depth frames, the channels have room.
func (s *zstdSink) push() {
	f := s.cur
	s.cur = nil
	f.seq = s.sent
	s.sent++
	s.jobs <- f
	s.order <- f
}

// Write copies p into frames; every byte of p is accepted (and reproduced
// by ReadBack) even when the pipeline has failed.
func (s *zstdSink) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && s.err == nil {
		if s.cur == nil {
			if s.cur, s.err = s.frame(); s.err != nil {
				break
			}
		}
		k := min(len(p), FrameSize-len(s.cur.src))
		s.cur.src = append(s.cur.src, p[:k]...)
		p = p[k:]
		if len(s.cur.src) == FrameSize {
			s.push()
		}
	}
	if s.err != nil {
		s.rest = append(s.rest, p...)
		return n, s.err
	}
	return n, nil
}

// shutdown closes the pipeline's input and waits for its goroutines.
func (s *zstdSink) shutdown() {
	if !s.shut {
		s.shut = true
		close(s.jobs)
		close(s.order)
	}
	s.wg.Wait()
	if s.err == nil && s.ctx.Err() != nil {
		s.err = context.Cause(s.ctx)
	}
}

// abort stops the pipeline without completing the file: each worker
// finishes the frame it is on, the writer the write it is in, and all
// exit. Frames not written stay in memory for ReadBack.
func (s *zstdSink) abort() {
	s.stop(errSinkStopped)
	s.shutdown()
}

func (s *zstdSink) Finish() (int64, error) {
	if s.err == nil && s.cur != nil {
		s.push()
	}
	s.shutdown()
	if s.err != nil {
		return 0, s.err
	}
	s.stop(nil)
	table := appendSeekTable(nil, s.entries)
	if n, err := s.out.Write(table); err != nil || n < len(table) {
		s.err = cmp.Or(err, io.ErrShortWrite)
		return 0, s.err
	}
	fi, err := s.f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// appendSeekTable appends the seek table of the seekable format (zstd's
// contrib/seekable_format): a skippable frame holding each frame's
// compressed size, uncompressed size and checksum, then a footer with the
// number of frames, a descriptor (checksums present) and the magic number.
// openZstd reads it back.
func appendSeekTable(b []byte, entries []seekEntry) []byte {
	le := binary.LittleEndian
	b = le.AppendUint32(b, seekTableFrameMagic)
	b = le.AppendUint32(b, uint32(len(entries)*12+seekTableFooterSize))
	for _, e := range entries {
		b = le.AppendUint32(b, e.size)
		b = le.AppendUint32(b, e.usize)
		b = le.AppendUint32(b, e.check)
	}
	b = le.AppendUint32(b, uint32(len(entries)))
	b = append(b, seekTableChecksums)
	return le.AppendUint32(b, seekTableMagic)
}

// ReadBack writes every accepted byte: frames written, decoded from the
// file, then frames not yet written, then the frame being filled. It stops
// the pipeline first.
func (s *zstdSink) ReadBack(out io.Writer) error {
	s.abort()
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(4*FrameSize))
	if err != nil {
		return err
	}
	defer dec.Close()
	var src, dst []byte
	for _, e := range s.entries {
		src = slices.Grow(src[:0], int(e.size))[:e.size]
		if _, err := s.f.ReadAt(src, e.off); err != nil {
			return err
		}
		if dst, err = dec.DecodeAll(src, dst[:0]); err != nil {
			return err
		}
		if _, err := out.Write(dst); err != nil {
			return err
		}
	}
	// Every frame pushed and not written is still in flight, so still
	// holds its bytes; written frames have a lower seq.
	var pending []*zframe
	for _, f := range s.all {
		if f.seq >= int64(len(s.entries)) {
			pending = append(pending, f)
		}
	}
	slices.SortFunc(pending, func(a, b *zframe) int { return cmp.Compare(a.seq, b.seq) })
	if s.cur != nil {
		pending = append(pending, s.cur)
	}
	for _, f := range pending {
		if _, err := out.Write(f.src); err != nil {
			return err
		}
	}
	_, err = out.Write(s.rest)
	return err
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
