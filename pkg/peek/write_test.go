package peek

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"hash"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/retval/retval/internal/safetext"
	"github.com/retval/retval/pkg/retain"
)

// hashingWriter counts and hashes what is written to it, keeping nothing.
type hashingWriter struct {
	n int64
	h hash.Hash
}

func (w *hashingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return w.h.Write(p)
}

// shortLines is a value of size bytes made of short lines (the worst case
// for a page held in memory: one Line per few bytes) and, in the middle,
// one long line.
func shortLines(size int) []byte {
	b := make([]byte, 0, size)
	for i := 0; len(b) < size; i++ {
		if i == 1000 {
			b = append(b, bytes.Repeat([]byte("long "), 200_000)...)
			b = append(b, '\n')
		}
		b = append(strconv.AppendInt(b, int64(i%1000), 10), " x\n"...)
	}
	return b[:size]
}

// wantText hashes what a peek of every line of v shows, and what a search
// shows for the lines holding q, each with its gutter.
func wantText(v, q []byte) (linesN int64, lines []byte, queryN int64, query []byte, matches int) {
	sl, sq := sha256.New(), sha256.New()
	hl, hq := bufio.NewWriterSize(sl, 1<<20), bufio.NewWriterSize(sq, 1<<20)
	var g []byte
	nl := true // the last line shown ends in a newline
	for k, s := int64(1), 0; s < len(v); k++ {
		e := bytes.IndexByte(v[s:], '\n')
		if e < 0 {
			e = len(v)
		} else {
			e += s + 1
		}
		g = append(strconv.AppendInt(g[:0], k, 10), ':', ' ')
		hl.Write(g)
		hl.Write(v[s:e])
		linesN += int64(len(g) + e - s)
		if bytes.Contains(v[s:e], q) {
			hq.Write(g)
			hq.Write(v[s:e])
			queryN += int64(len(g) + e - s)
			matches++
			nl = v[e-1] == '\n'
		}
		s = e
	}
	tr := fmt.Sprintf("[%d matches; shown 1-%d]\n", matches, matches)
	if !nl {
		tr = "\n" + tr
	}
	hq.Write([]byte(tr))
	hl.Flush()
	hq.Flush()
	return linesN, sl.Sum(nil), queryN + int64(len(tr)), sq.Sum(nil), matches
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestWriteUncappedMemory: with both caps lifted (an engineer paging into
// less), a peek of a 64 MiB value writes every byte exactly and allocates
// a small fraction of the value, whatever its size: lines, a search that
// matches every line, and a byte range.
func TestWriteUncappedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates a 64 MiB value")
	}
	size := 64 << 20
	if raceEnabled {
		size = 16 << 20 // still far past the bound, held as a page
	}
	const bound = 32 << 20
	v := shortLines(size)
	src := newMem(v, 1000)
	n := src.Lines()

	wantN, wantSum, wantQN, wantQSum, matches := wantText(v, []byte(" x"))
	out := &hashingWriter{h: sha256.New()}
	var err error
	a := allocated(func() { err = writeLines(out, src, 1, ToEnd, NoCaps) })
	if err != nil {
		t.Fatal(err)
	}
	if out.n != wantN || !bytes.Equal(out.h.Sum(nil), wantSum) {
		t.Errorf("lines: wrote %d bytes, want %d (or the bytes differ)", out.n, wantN)
	}
	t.Logf("lines: %d lines, %d bytes written, %d bytes allocated", n, out.n, a)
	if a > bound {
		t.Errorf("lines: allocated %d bytes for a %d-byte value, want < %d", a, size, bound)
	}

	// " x" is on every line but the long one: the search shows them all.
	out = &hashingWriter{h: sha256.New()}
	a = allocated(func() { err = writeQuery(out, src, QueryOptions{Query: " x"}, NoCaps) })
	if err != nil {
		t.Fatal(err)
	}
	if out.n != wantQN || !bytes.Equal(out.h.Sum(nil), wantQSum) {
		t.Errorf("query: wrote %d bytes, want %d (or the bytes differ)", out.n, wantQN)
	}
	t.Logf("query: %d matches, %d bytes allocated", matches, a)
	if a > bound {
		t.Errorf("query: allocated %d bytes, want < %d", a, bound)
	}

	out = &hashingWriter{h: sha256.New()}
	a = allocated(func() { err = writeBytes(out, src, 0, int64(len(v)), NoCaps) })
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(v); out.n != int64(len(v)) || !bytes.Equal(out.h.Sum(nil), sum[:]) {
		t.Errorf("bytes: wrote %d bytes, want the value's %d", out.n, len(v))
	}
	if a > bound {
		t.Errorf("bytes: allocated %d bytes, want < %d", a, bound)
	}
}

// TestWriteEscapes: a value holding terminal escapes is written escaped
// under Caps.Escape — streamed or as a page, lines, searches and byte
// ranges — and exactly without it; gutters and continuation lines are
// never escaped, and the byte cap counts the escaped text.
func TestWriteEscapes(t *testing.T) {
	v := []byte("plain\n\x1b[2J\x1b]0;owned\x07 csi\u009b31m bidi\u202eevil\u2069\r\n\xff\xfe end")
	src := newMem(v, 0)
	esc := "1: plain\n2: \\x1b[2J\\x1b]0;owned\\x07 csi\\u009b31m bidi\\u202eevil\\u2069\\x0d\n3: \\xff\\xfe end"
	for _, c := range []Caps{{Escape: true}, {Lines: retain.Unlimited, Bytes: retain.Unlimited, Escape: true}} {
		var out bytes.Buffer
		if err := writeLines(&out, src, 1, ToEnd, c); err != nil {
			t.Fatal(err)
		}
		if out.String() != esc {
			t.Errorf("caps %+v:\ngot  %q\nwant %q", c, out.String(), esc)
		}
		out.Reset()
		if err := writeQuery(&out, src, QueryOptions{Query: "evil"}, c); err != nil {
			t.Fatal(err)
		}
		if want := "2: \\x1b[2J\\x1b]0;owned\\x07 csi\\u009b31m bidi\\u202eevil\\u2069\\x0d\n[1 match; shown 1-1]\n"; out.String() != want {
			t.Errorf("query, caps %+v:\ngot  %q\nwant %q", c, out.String(), want)
		}
		out.Reset()
		if err := writeBytes(&out, src, 6, 10, c); err != nil {
			t.Fatal(err)
		}
		if want := `\x1b[2J`; out.String() != want {
			t.Errorf("bytes, caps %+v: got %q, want %q", c, out.String(), want)
		}
	}
	// Without Escape the bytes are exact.
	var out bytes.Buffer
	if err := writeLines(&out, src, 2, 2, NoCaps); err != nil {
		t.Fatal(err)
	}
	if want := "2: " + string(v[6:bytes.LastIndexByte(v, '\n')+1]); out.String() != want {
		t.Errorf("exact: got %q, want %q", out.String(), want)
	}

	// The byte cap holds on the escaped text: escapes make a line of 300
	// bytes 1200 bytes long, so a 500-byte cap cuts it.
	ctl := []byte(strings.Repeat("\x01", 300) + "\n" + strings.Repeat("\x1b", 300))
	for _, sel := range []func(*bytes.Buffer, Caps) error{
		func(b *bytes.Buffer, c Caps) error { return writeLines(b, newMem(ctl, 0), 1, ToEnd, c) },
		func(b *bytes.Buffer, c Caps) error {
			return writeQuery(b, newMem(ctl, 0), QueryOptions{Query: "\x01"}, c)
		},
		func(b *bytes.Buffer, c Caps) error { return writeBytes(b, newMem(ctl, 0), 0, 601, c) },
		func(b *bytes.Buffer, c Caps) error { return writeBytes(b, newMem(ctl, 0), 0, 200, c) },
	} {
		var b bytes.Buffer
		if err := sel(&b, Caps{Bytes: 500, Escape: true}); err != nil {
			t.Fatal(err)
		}
		if b.Len() > 500 || !safetext.Clean(b.Bytes()) || !bytes.Contains(b.Bytes(), []byte(`\x01\x01`)) && !bytes.Contains(b.Bytes(), []byte(`\x1b\x1b`)) {
			t.Errorf("escaped under a 500-byte cap: %d bytes: %q", b.Len(), b.Bytes())
		}
	}
}

// BenchmarkWriteLinesUncapped writes a whole ~46 MiB log with no caps.
func BenchmarkWriteLinesUncapped(b *testing.B) {
	_, v := retainValueB(b)
	out := &hashingWriter{h: nopHash{}}
	for b.Loop() {
		if err := WriteLines(out, v, 1, ToEnd, NoCaps); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(v.Size())
}

// BenchmarkWriteLinesUncappedEscaped is the same, escaped for a terminal.
func BenchmarkWriteLinesUncappedEscaped(b *testing.B) {
	_, v := retainValueB(b)
	out := &hashingWriter{h: nopHash{}}
	for b.Loop() {
		if err := WriteLines(out, v, 1, ToEnd, Caps{Lines: retain.Unlimited, Bytes: retain.Unlimited, Escape: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(v.Size())
}

// nopHash is a hash.Hash that only discards.
type nopHash struct{ hash.Hash }

func (nopHash) Write(p []byte) (int, error) { return len(p), nil }

// TestRenderAllocatesOnce: a page is rendered into one buffer sized for it
// up front, gutters written in place — not grown by doubling with a
// string per gutter, which cost a fresh process page faults.
func TestRenderAllocatesOnce(t *testing.T) {
	p := &LinesPage{First: 1, Last: 400, Total: 400}
	for n := int64(1); n <= 400; n++ {
		p.Lines = append(p.Lines, Line{N: n, Text: []byte("2026-11-30T05:00:00Z INFO req=000000000 path=/api/v1/items/0 status=200\n")})
	}
	if p.Trailer() != "" {
		t.Fatalf("page has a trailer %q", p.Trailer())
	}
	if got := string(p.Render()); !strings.HasPrefix(got, "1: 2026") || !strings.Contains(got, "\n400: 2026") {
		t.Fatalf("render: %.40q…", got)
	}
	if a := testing.AllocsPerRun(20, func() { p.Render() }); a != 1 {
		t.Errorf("Render allocates %v times, want 1", a)
	}
}
