package retain

import (
	"bytes"
	"cmp"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	seekable "github.com/SaveTheRbtz/zstd-seekable-format-go/pkg"
	"github.com/cespare/xxhash/v2"
)

// zstdFile compresses data through a sink with the given number of
// workers, in writes of chunk bytes, and returns the file's bytes.
func zstdFile(t *testing.T, data []byte, workers, chunk int) []byte {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "v.zst"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := newZstdSinkTo(f, f, workers)
	for off := 0; off < len(data); off += chunk {
		if n, err := s.Write(data[off:min(off+chunk, len(data))]); err != nil || n != min(chunk, len(data)-off) {
			t.Fatalf("write: %d, %v", n, err)
		}
	}
	size, err := s.Finish()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != size {
		t.Fatalf("finish says %d bytes, the file has %d", size, len(b))
	}
	return b
}

// noSinkGoroutines fails the test if a goroutine of a zstd sink is still
// running: the calls before it return only once theirs have exited.
func noSinkGoroutines(t *testing.T) {
	t.Helper()
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	if bytes.Contains(buf, []byte("(*zstdSink)")) {
		t.Fatalf("a zstd sink's goroutine is still running:\n%s", buf)
	}
}

// TestZstdSinkSameBytesOnAnyNumberOfCores: a value compresses to the same
// file whatever the number of workers and however its writes are cut, and
// that file is byte for byte what the seekable format's own writer makes
// of the same frames.
func TestZstdSinkSameBytesOnAnyNumberOfCores(t *testing.T) {
	data := bigValue(9*FrameSize + 4321)
	one := zstdFile(t, data, 1, 1<<20)
	four := zstdFile(t, data, 4, 77777)
	if !bytes.Equal(one, four) {
		t.Fatalf("1 worker made %d bytes, 4 workers %d bytes, not the same", len(one), len(four))
	}
	var ref bytes.Buffer
	w, err := seekable.NewWriter(&ref, zstdEncoder())
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off < len(data); off += FrameSize {
		if _, err := w.Write(data[off:min(off+FrameSize, len(data))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(one, ref.Bytes()) {
		t.Fatalf("the sink made %d bytes, the seekable writer %d, not the same", len(one), ref.Len())
	}
	noSinkGoroutines(t)
}

// TestZstdSinkRoundTrip: values of sizes around the frame size, written in
// writes of every shape, give a seek table of full frames (the last one
// shorter) with each frame's checksum, and read back exactly, across every
// frame boundary too.
func TestZstdSinkRoundTrip(t *testing.T) {
	for _, size := range []int{0, 1, FrameSize - 1, FrameSize, FrameSize + 1, 2 * FrameSize, 3*FrameSize + 7} {
		data := bigValue(size)
		for _, chunk := range []int{1, 4093, FrameSize, 1 << 20} {
			if chunk == 1 && size > FrameSize+1 {
				continue // a byte at a time is slow; the smaller sizes cover it
			}
			b := zstdFile(t, data, 2, chunk)
			z, err := openZstd(bytes.NewReader(b), &Descriptor{ID: "v", Size: int64(size), StoredBytes: int64(len(b))})
			if err != nil {
				t.Fatalf("size %d, writes of %d: %v", size, chunk, err)
			}
			if want := int64((size + FrameSize - 1) / FrameSize); z.table.NumFrames() != want {
				t.Fatalf("size %d: %d frames, want %d", size, z.table.NumFrames(), want)
			}
			for i := range z.table.NumFrames() {
				e, _ := z.table.EntryByID(i)
				frame := data[e.DecompressedOffset : e.DecompressedOffset+uint64(e.DecompressedSize)]
				if i < z.table.NumFrames()-1 && len(frame) != FrameSize {
					t.Fatalf("size %d: frame %d holds %d bytes, want %d", size, i, len(frame), FrameSize)
				}
				if e.Checksum != uint32(xxhash.Sum64(frame)) {
					t.Fatalf("size %d: frame %d's checksum %08x is not its bytes'", size, i, e.Checksum)
				}
			}
			got := make([]byte, size)
			if n, err := z.ReadAt(got, 0); n != size || (err != nil && err != io.EOF) || !bytes.Equal(got, data) {
				t.Fatalf("size %d, writes of %d: read %d bytes back (%v), not the value", size, chunk, n, err)
			}
			for k := FrameSize; k < size; k += FrameSize {
				got := make([]byte, min(5, size-(k-2)))
				if _, err := z.ReadAt(got, int64(k-2)); (err != nil && err != io.EOF) || !bytes.Equal(got, data[k-2:k-2+len(got)]) {
					t.Fatalf("size %d: bytes across frame boundary %d: %q (%v), want %q", size, k, got, err, data[k-2:k-2+len(got)])
				}
			}
			z.close()
		}
	}
	noSinkGoroutines(t)
}

// failingWriter passes its first ok writes to w and fails every one after.
type failingWriter struct {
	w  io.Writer
	ok int
}

var errInjected = errors.New("injected write failure")

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.ok == 0 {
		return 0, errInjected
	}
	f.ok--
	return f.w.Write(p)
}

// TestZstdSinkWriteFailsMidStream: a frame write that fails, first or
// later, or the seek table's, ends the retain's writes with that error;
// every byte accepted reads back, in order, and no goroutine of the sink
// is left behind.
func TestZstdSinkWriteFailsMidStream(t *testing.T) {
	data := bigValue(10*FrameSize + 1234) // 11 frames, then the seek table
	for _, ok := range []int{0, 1, 3, 10, 11} {
		f, err := os.Create(filepath.Join(t.TempDir(), "v.zst"))
		if err != nil {
			t.Fatal(err)
		}
		s := newZstdSinkTo(f, &failingWriter{w: f, ok: ok}, 2)
		var werr error
		for off := 0; off < len(data); off += 100000 {
			n, err := s.Write(data[off:min(off+100000, len(data))])
			if n != min(100000, len(data)-off) {
				t.Fatalf("%d writes pass: a write took %d of %d bytes", ok, n, min(100000, len(data)-off))
			}
			werr = cmp.Or(werr, err)
		}
		_, ferr := s.Finish()
		if !errors.Is(ferr, errInjected) || werr != nil && !errors.Is(werr, errInjected) {
			t.Fatalf("%d writes pass: write %v, finish %v; want the injected failure", ok, werr, ferr)
		}
		noSinkGoroutines(t)
		if ok <= 11 && len(s.entries) != min(ok, 11) {
			t.Fatalf("%d writes pass: %d frames written", ok, len(s.entries))
		}
		var back bytes.Buffer
		if err := s.ReadBack(&back); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(back.Bytes(), data) {
			t.Fatalf("%d writes pass: read back %d bytes, not the %d accepted", ok, back.Len(), len(data))
		}
		f.Close()
	}
}

// gatedWriter holds its first write until open is closed.
type gatedWriter struct {
	w       io.Writer
	writes  int
	entered chan struct{}
	open    chan struct{}
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	g.writes++
	if g.writes == 1 {
		close(g.entered)
		<-g.open
	}
	return g.w.Write(p)
}

// TestZstdSinkAbort: a sink dropped mid-stream (the value went past
// max-value-size, or the retain failed) writes no frame after the one
// under way, leaves no goroutine running, and still reads back every
// byte it accepted.
func TestZstdSinkAbort(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "v.zst"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g := &gatedWriter{w: f, entered: make(chan struct{}), open: make(chan struct{})}
	s := newZstdSinkTo(f, g, 2)
	data := bigValue(4*FrameSize + 999) // fewer frames than the pipeline holds: no write waits
	if _, err := s.Write(data); err != nil {
		t.Fatal(err)
	}
	<-g.entered // the first frame is being written
	aborted := make(chan struct{})
	go func() {
		s.abort()
		close(aborted)
	}()
	<-s.ctx.Done() // abort has stopped the pipeline
	close(g.open)
	select {
	case <-aborted:
	case <-time.After(time.Minute):
		t.Fatal("abort did not return within a minute of the frame write it waited for")
	}
	noSinkGoroutines(t)
	if g.writes != 1 || len(s.entries) != 1 {
		t.Fatalf("%d writes (%d frames) after the abort, want only the one under way", g.writes, len(s.entries))
	}
	var back bytes.Buffer
	if err := s.ReadBack(&back); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Bytes(), data) {
		t.Fatalf("read back %d bytes, not the %d accepted", back.Len(), len(data))
	}
}

// TestRetainZstdPastMaxValueSize: a compressed retain that passes
// max-value-size stops compressing: no sink goroutine stays, no temporary
// file stays, and the value is not retained.
func TestRetainZstdPastMaxValueSize(t *testing.T) {
	s := testStore(t)
	L := DefaultLimits()
	L.Threshold, L.MaxValueSize = Unlimited, 3*FrameSize
	data := bigValue(40 * FrameSize)
	res, err := s.Retain(bytes.NewReader(data), io.Discard, RetainOptions{Run: "r", Call: "c", Limits: L, Policy: PolicyLegacy, Compress: "zstd"})
	if err != nil || res.NotRetained == "" || res.Retained {
		t.Fatalf("retain past max-value-size: %+v, %v", res, err)
	}
	noSinkGoroutines(t)
	ents, _ := os.ReadDir(s.RunDir("r"))
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// TestRetainZstdAcrossFrames: a compressed value whose lines straddle
// frame boundaries has the SHA-256, lines and line index a plain one has,
// and every line near a boundary reads back whole.
func TestRetainZstdAcrossFrames(t *testing.T) {
	s := testStore(t)
	data := bigValue(6*FrameSize + 333)
	retainComp(t, s, "r", "z", data, "zstd")
	retainComp(t, s, "r", "p", data, "none")
	checkRoundTrip(t, s, "r", "z", data)
	z, err := s.OpenValue("r", "z")
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	p, err := s.OpenValue("r", "p")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if z.Desc.SHA256 != p.Desc.SHA256 || z.Desc.Lines != p.Desc.Lines {
		t.Fatalf("zstd: %s, %d lines; plain: %s, %d lines", z.Desc.SHA256, z.Desc.Lines, p.Desc.SHA256, p.Desc.Lines)
	}
	zi, pi := z.Index(), p.Index()
	if zi == nil || pi == nil || zi.Stride != pi.Stride || !slices.Equal(zi.Starts, pi.Starts) {
		t.Fatal("the zstd value's line index is not the plain value's")
	}
	for k := FrameSize; k < len(data); k += FrameSize {
		start := bytes.LastIndexByte(data[:k], '\n') + 1
		end := k + bytes.IndexByte(data[k:], '\n') + 1
		got, err := z.Bytes(int64(start), int64(end))
		if err != nil || !bytes.Equal(got, data[start:end]) {
			t.Fatalf("the line across frame boundary %d: %q (%v)", k, got, err)
		}
	}
}
