package peek

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/retval/retval/internal/safetext"
	"github.com/retval/retval/pkg/retain"
)

// strides are the index layouts every check runs under: none (a scan),
// and indexes dense enough to be used on small values.
var strides = []int64{0, 1, 2, 3, 7}

// valueFrom turns arbitrary bytes into a value with many short lines and
// a mix of ASCII, multi-byte, invalid UTF-8 and \r\n.
func valueFrom(data []byte) []byte {
	pieces := []string{"a", "b", "ab", "\n", "\n", "\r\n", "é", "€", "🙂", "\xff", "\xe2\x82", " ", "x", "\n"}
	var b []byte
	for _, c := range data {
		b = append(b, pieces[int(c)%len(pieces)]...)
		if c >= 200 {
			b = append(b, bytes.Repeat([]byte("z"), int(c-200)*3)...)
		}
	}
	return b
}

// sameErr reports whether two errors agree: both nil, or the same code.
func sameErr(t *testing.T, what string, got, want error) bool {
	t.Helper()
	if (got == nil) != (want == nil) || got != nil && retain.CodeOf(got) != retain.CodeOf(want) {
		t.Fatalf("%s: error %v, reference %v", what, got, want)
	}
	return got == nil
}

func checkPage(t *testing.T, what string, got, want page, c Caps) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\ngot       %q\nreference %q\n%+v\n%+v", what, got.Render(), want.Render(), got, want)
	}
	if r := got.Render(); c.effective().Bytes > 0 && int64(len(r)) > c.effective().Bytes {
		t.Fatalf("%s: rendered %d bytes, cap %d", what, len(r), c.Bytes)
	}
}

func (p *LinesPage) escaped() bool { return p.escape }
func (p *QueryPage) escaped() bool { return p.escape }
func (p *BytesPage) escaped() bool { return p.escape }

func checkWritten(t *testing.T, what string, got []byte, want page) {
	t.Helper()
	if w := want.Render(); !bytes.Equal(got, w) {
		t.Fatalf("write %s:\ngot       %q\nreference %q", what, got, w)
	}
	if want.(interface{ escaped() bool }).escaped() && !safetext.Clean(got) {
		// Everything but the value's bytes is retval's own, and clean.
		t.Fatalf("write %s: escaped output is not clean: %q", what, got)
	}
}

// checkValue runs one line range, one query and one byte range on v under
// every index layout and compares each with its reference, then checks
// that paging through the continuation hints reads all of v.
func checkValue(t *testing.T, v []byte, first, last int64, o QueryOptions, bs, be int64, c Caps) {
	t.Helper()
	for _, ch := range []struct{ scan, query int }{{64 << 10, 1 << 20}, {7, 16}, {1, 5}} {
		defer func(s, q int) { scanChunk, queryChunk = s, q }(scanChunk, queryChunk)
		scanChunk, queryChunk = ch.scan, ch.query
		checkValueChunks(t, v, first, last, o, bs, be, c)
	}
}

func checkValueChunks(t *testing.T, v []byte, first, last int64, o QueryOptions, bs, be int64, c Caps) {
	t.Helper()
	wl, wlErr := refLines(v, first, last, c)
	wq, wqErr := refQuery(v, o, c)
	wb, wbErr := refBytes(v, bs, be, c)
	for _, st := range strides {
		src := newMem(v, st)
		gl, err := lines(src, first, last, c)
		if sameErr(t, "lines", err, wlErr) {
			checkPage(t, "lines", gl, wl, c)
		}
		gq, err := query(src, o, c)
		if sameErr(t, "query", err, wqErr) {
			checkPage(t, "query", gq, wq, c)
		}
		gb, err := bytesPage(src, bs, be, c)
		if sameErr(t, "bytes", err, wbErr) {
			checkPage(t, "bytes", gb, wb, c)
		}
	}
	// Written, streamed or not, the text is the page's.
	src := newMem(v, 3)
	var out bytes.Buffer
	if sameErr(t, "write lines", writeLines(&out, src, first, last, c), wlErr) {
		checkWritten(t, "lines", out.Bytes(), wl)
	}
	out.Reset()
	if sameErr(t, "write query", writeQuery(&out, src, o, c), wqErr) {
		checkWritten(t, "query", out.Bytes(), wq)
	}
	out.Reset()
	if sameErr(t, "write bytes", writeBytes(&out, src, bs, be, c), wbErr) {
		checkWritten(t, "bytes", out.Bytes(), wb)
	}
	if b := c.effective().Bytes; b == 0 || b >= 160 {
		checkPaging(t, v, c)
		if wqErr == nil {
			checkQueryPaging(t, v, o, c)
		}
	}
}

// checkPaging follows the continuation hints from a peek without a
// selector (and the --bytes hints of cut lines) and checks that they read
// every byte of v exactly once, in order.
func checkPaging(t *testing.T, v []byte, c Caps) {
	t.Helper()
	src := newMem(v, 3)
	var got []byte
	var trail []string
	first, last := int64(1), ToEnd
	for i := 0; ; i++ {
		if i > len(v)+2 {
			t.Fatalf("paging does not end")
		}
		p, err := lines(src, first, last, c)
		if err != nil {
			t.Fatalf("lines %d-%d: %v", first, last, err)
		}
		trail = append(trail, fmt.Sprintf("%d-%d: %s", first, last, p.Trailer()))
		for _, l := range p.Lines {
			got = append(got, l.Text...)
			if l.Cut {
				a, e := l.Rest()
				got = append(got, readBytes(t, src, a, e, c)...)
				got = append(got, v[e:l.End]...) // the newline the rest leaves out
			}
		}
		if p.Next == nil {
			break
		}
		first, last = p.Next.First, p.Next.Last
	}
	if !bytes.Equal(got, v) {
		t.Fatalf("caps %+v: paging read %q, want %q\npages: %q", c, got, v, trail)
	}
}

// readBytes reads [a, e) following --bytes hints.
func readBytes(t *testing.T, src source, a, e int64, c Caps) []byte {
	t.Helper()
	var out []byte
	for {
		p, err := bytesPage(src, a, e, c)
		if err != nil {
			t.Fatalf("bytes %d-%d: %v", a, e, err)
		}
		out = append(out, p.Data...)
		if p.Next == nil {
			return out
		}
		if p.Next.First <= a {
			t.Fatalf("bytes %d-%d: no progress", a, e)
		}
		a, e = p.Next.First, p.Next.Last
	}
}

// checkQueryPaging follows --after-line hints and checks that every
// matching line is shown once, in order, and nothing else is a match.
func checkQueryPaging(t *testing.T, v []byte, o QueryOptions, c Caps) {
	t.Helper()
	o.AfterLine = 0
	want := refMatches(v, o)
	var got []int64
	src := newMem(v, 2)
	for i := 0; ; i++ {
		if i > len(want)+1 {
			t.Fatalf("query paging does not end")
		}
		p, err := query(src, o, c)
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != int64(len(want)) {
			t.Fatalf("total %d, want %d", p.Total, len(want))
		}
		for _, l := range p.Lines {
			if l.Match {
				got = append(got, l.N)
			}
		}
		if p.Next == 0 {
			break
		}
		o.AfterLine = p.Next
	}
	if !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("paged matches %v, want %v", got, want)
	}
}

// orNone is n as a cap, 0 meaning none.
func orNone(n int64) int64 {
	if n == 0 {
		return retain.Unlimited
	}
	return n
}

var queries = []string{"a", "b", "ab", "é", "€", "\xff", "z", "a\r", "^a", "b$", `a\z`, `^$`, `(?s)a.b`, `[^x]`, `é|ab`, "A", "x*", "zz", "🙂"}

func TestProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 400 {
		data := make([]byte, rng.IntN(300))
		for k := range data {
			data[k] = byte(rng.UintN(256))
		}
		v := valueFrom(data)
		n := int64(len(refSplit(v)))
		first := rng.Int64N(n+3) + 0
		last := first + rng.Int64N(20)
		if rng.IntN(3) == 0 {
			last = ToEnd
		}
		o := QueryOptions{
			Query:      queries[rng.IntN(len(queries))],
			Regex:      rng.IntN(2) == 0,
			IgnoreCase: rng.IntN(4) == 0,
			Context:    rng.Int64N(3),
			AfterLine:  rng.Int64N(n + 2),
		}
		size := int64(len(v))
		bs := rng.Int64N(size + 2)
		be := bs + rng.Int64N(size-bs+2)
		c := Caps{Lines: orNone(rng.Int64N(6)), Bytes: orNone([]int64{0, 120, 160, 200, 300, 1000}[rng.IntN(6)]),
			Escape: rng.IntN(3) == 0}
		t.Logf("case %d", i)
		checkValue(t, v, first, last, o, bs, be, c)
	}
}

func FuzzPeek(f *testing.F) {
	f.Add([]byte("hello\nworld\n"), uint16(1), uint16(2), "o", uint8(0), uint8(2), uint16(200), uint16(1), uint16(5))
	f.Add([]byte{1, 3, 7, 250, 3, 6, 6, 6, 4, 9, 3}, uint16(2), uint16(9), "é", uint8(3), uint8(1), uint16(160), uint16(0), uint16(40))
	f.Add([]byte{255, 3, 255, 3, 0, 3}, uint16(1), uint16(65535), "^z+$", uint8(1), uint8(0), uint16(0), uint16(3), uint16(300))
	f.Fuzz(func(t *testing.T, data []byte, a, b uint16, q string, flags, capL uint8, capB, bs, be uint16) {
		v := valueFrom(data)
		last := int64(a) + int64(b)
		if b == 65535 {
			last = ToEnd
		}
		o := QueryOptions{Query: q, Regex: flags&1 != 0, IgnoreCase: flags&2 != 0,
			Context: int64(flags>>2) % 4, AfterLine: int64(flags >> 4)}
		c := Caps{Lines: orNone(int64(capL % 8)), Bytes: orNone(int64(capB)), Escape: capL&8 != 0}
		checkValue(t, v, int64(a), last, o, int64(bs), int64(bs)+int64(be), c)
	})
}
