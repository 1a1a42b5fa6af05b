package retain

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestSinkStartsWriteback: a content file's writeback is started as it is
// written, in contiguous steps that cover what was written, so that the
// fsync at the end waits for one step at most; a spool file (no start
// function) is never written out early.
func TestSinkStartsWriteback(t *testing.T) {
	type span struct{ off, n int64 }
	for _, comp := range []Compression{CompressNone, CompressZstd} {
		t.Run(string(comp), func(t *testing.T) {
			f, err := os.Create(filepath.Join(t.TempDir(), "v"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var spans []span
			start := func(g *os.File, off, n int64) {
				if g != f {
					t.Errorf("writeback of another file")
				}
				spans = append(spans, span{off, n})
			}
			var s sink
			if comp == CompressZstd {
				s = newZstdSink(f, start)
			} else {
				s = newPlainSink(f, start)
			}
			// Random bytes: zstd cannot shrink them, so both sinks write
			// about 40 MiB.
			data := make([]byte, 40<<20)
			rand.NewChaCha8([32]byte{1}).Read(data)
			for off := 0; off < len(data); off += 1 << 20 {
				if _, err := s.Write(data[off : off+1<<20]); err != nil {
					t.Fatal(err)
				}
			}
			size, err := s.Finish()
			if err != nil {
				t.Fatal(err)
			}
			var next int64
			for _, sp := range spans {
				if sp.off != next || sp.n < writebackStep {
					t.Fatalf("writeback spans %v: not contiguous steps of at least %d bytes", spans, writebackStep)
				}
				next = sp.off + sp.n
			}
			if size-next >= writebackStep || len(spans) < 4 {
				t.Fatalf("writeback started for %d of %d bytes (%d spans): the fsync would wait for more than a step", next, size, len(spans))
			}
		})
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "spool"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := newPlainSink(f, nil) // a spool: nothing to start
	if _, err := s.Write(bytes.Repeat([]byte("x"), 3*writebackStep)); err != nil {
		t.Fatal(err)
	}
}

// TestZstdSinkReusesFrameBuffers: frames are compressed into and written
// from a few buffers used again, not from a new buffer per frame (the
// seekable library's writer made as much garbage as the value is long),
// and the value reads back whole.
func TestZstdSinkReusesFrameBuffers(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "v.zst"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data := bigValue(128 * FrameSize)
	write := func() *zstdSink {
		f.Truncate(0)
		f.Seek(0, io.SeekStart)
		s := newZstdSink(f, nil)
		for off := 0; off < len(data); off += 100000 {
			if _, err := s.Write(data[off:min(off+100000, len(data))]); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Finish(); err != nil {
			t.Fatal(err)
		}
		return s
	}
	write() // the shared encoders' tables and buffers, made once per process
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s := write()
	runtime.ReadMemStats(&after)
	// Each frame made holds its bytes and their compressed form; a new
	// buffer per frame would allocate the value's 32 MiB again.
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(s.depth*2*FrameSize+1<<20); got > limit {
		t.Errorf("%d bytes allocated for %d frames (%d frames of %d made), want at most %d", got, len(data)/FrameSize, len(s.all), s.depth, limit)
	}
	var back bytes.Buffer
	if err := s.ReadBack(&back); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Bytes(), data) {
		t.Fatalf("read back %d bytes, not the %d written", back.Len(), len(data))
	}
}
