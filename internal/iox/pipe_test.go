package iox

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"testing"
	"time"
)

// filledPipe returns a pipe holding n bytes whose read deadline has
// passed: the state a reader that comes late finds once the command has
// exited.
func filledPipe(t *testing.T, n int) (r, w *os.File) {
	t.Helper()
	r, w, err := Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	if _, err := w.Write(bytes.Repeat([]byte("x"), n)); err != nil {
		t.Fatal(err)
	}
	r.SetReadDeadline(time.Now().Add(-time.Second))
	return r, w
}

// What the writer wrote before it exited is read even by a reader that
// comes after the deadline.
func TestPipeReaderReadsWhatThePipeHolds(t *testing.T) {
	r, _ := filledPipe(t, 60000)
	b, err := io.ReadAll(NewPipeReader(r))
	if err != nil || len(b) != 60000 {
		t.Fatalf("read %d bytes (%v) of the 60000 in the pipe", len(b), err)
	}
}

// A process left behind that keeps writing cannot keep the reader past
// what the pipe held at the deadline (where the system can say; at most
// the most a pipe holds otherwise).
func TestPipeReaderStopsAtWhatThePipeHeld(t *testing.T) {
	r, w := filledPipe(t, 60000)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		chunk := bytes.Repeat([]byte("y"), 4096)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}()
	b, err := io.ReadAll(NewPipeReader(r))
	if err != nil {
		t.Fatal(err)
	}
	// The writer may add to the pipe before the deadline is seen, up to
	// what a new pipe holds (64 KiB on Linux).
	want, most := 60000, 1<<16
	if runtime.GOOS != "linux" {
		most = 60000 + 1<<20
	}
	if len(b) < want || len(b) > most || bytes.ContainsRune(b[:want], 'y') {
		t.Fatalf("read %d bytes, want %d..%d, the first %d the ones there at the deadline", len(b), want, most, want)
	}
}

// Cut says whether the deadline ended the reading.
func TestPipeReaderCut(t *testing.T) {
	r, w, err := Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w.Write([]byte("x"))
	w.Close()
	p := NewPipeReader(r)
	if b, err := io.ReadAll(p); err != nil || string(b) != "x" || p.Cut() {
		t.Fatalf("read %q, %v; cut %v: want all of it, not cut", b, err, p.Cut())
	}
	r2, _ := filledPipe(t, 10)
	p = NewPipeReader(r2)
	if b, err := io.ReadAll(p); err != nil || len(b) != 10 || !p.Cut() {
		t.Fatalf("read %d bytes, %v; cut %v: want 10, cut", len(b), err, p.Cut())
	}
}

// The count taken at the deadline is the bound: what a writer left
// behind adds after it is not read, whatever the size of the system's
// int the count comes in.
func TestPipeReaderCountBoundsTheRead(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux can say how much the pipe holds")
	}
	r, w := filledPipe(t, 10)
	p := NewPipeReader(r)
	b := make([]byte, 4)
	if n, err := p.Read(b); n != 4 || err != nil {
		t.Fatalf("first read: %d, %v", n, err)
	}
	// Written after the count was taken.
	if _, err := w.Write(bytes.Repeat([]byte("y"), 10)); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(p)
	if err != nil || len(rest) != 6 || bytes.ContainsRune(rest, 'y') {
		t.Fatalf("then read %q, %v: want the 6 bytes left of the 10 there at the deadline", rest, err)
	}
}

// A pipe whose writers are all gone was read to its end, however late
// the reader came: that is no cut.
func TestPipeReaderNotCutAtTheEnd(t *testing.T) {
	for _, n := range []int{0, 1, 60000} {
		r, w := filledPipe(t, n)
		w.Close()
		p := NewPipeReader(r)
		if b, err := io.ReadAll(p); err != nil || len(b) != n || p.Cut() {
			t.Fatalf("%d bytes: read %d, %v; cut %v: want all of it, not cut", n, len(b), err, p.Cut())
		}
	}
}
