package peek

import (
	"bufio"
	"bytes"
	"io"

	"github.com/retval/retval/internal/safetext"
	"github.com/retval/retval/pkg/retain"
)

// WriteLines writes to w what Lines(v, first, last, c).Render() returns.
// Without a byte cap it streams: it reads the value as it writes, so its
// memory stays the same whatever the size of the output (a page of lines
// is otherwise held in memory, several times its size). With a byte cap,
// the page is at most the cap and is built, then written.
func WriteLines(w io.Writer, v *retain.Value, first, last int64, c Caps) error {
	return writeLines(w, sourceOf(v), first, last, c)
}

// WriteQuery writes to w what Query(v, o, c).Render() returns, streaming
// when there is no byte cap (see WriteLines).
func WriteQuery(w io.Writer, v *retain.Value, o QueryOptions, c Caps) error {
	return writeQuery(w, sourceOf(v), o, c)
}

// WriteBytes writes to w what Bytes(v, start, end, c).Render() returns,
// streaming when there is no byte cap (see WriteLines).
func WriteBytes(w io.Writer, v *retain.Value, start, end int64, c Caps) error {
	return writeBytes(w, sourceOf(v), start, end, c)
}

// writeBuffer is how much output is gathered before a write.
const writeBuffer = 64 << 10

// pageWriter writes a page as it is read: gutters and continuation lines
// as they are, the value's bytes as they are or escaped.
type pageWriter struct {
	bw     *bufio.Writer
	esc    *safetext.Writer // nil unless escaping
	any    bool             // something was written
	lastNL bool             // the last byte of the value written was a newline
	err    error
	num    []byte // scratch for gutters
}

func newPageWriter(w io.Writer, escape bool) *pageWriter {
	o := &pageWriter{bw: bufio.NewWriterSize(w, writeBuffer)}
	if escape {
		o.esc = safetext.NewWriter(o.bw)
	}
	return o
}

// frame writes text of retval's own: a gutter, a separator.
func (o *pageWriter) frame(s string) {
	o.endValue()
	if o.err == nil && s != "" {
		_, o.err = o.bw.WriteString(s)
		o.any, o.lastNL = true, s[len(s)-1] == '\n'
	}
}

// gutter writes the gutter of line n, allocating nothing.
func (o *pageWriter) gutter(n int64) {
	o.num = appendGutter(o.num[:0], n)
	o.endValue()
	if o.err == nil {
		_, o.err = o.bw.Write(o.num)
		o.any, o.lastNL = true, false
	}
}

// value writes bytes of the value.
func (o *pageWriter) value(p []byte) error {
	if o.err != nil || len(p) == 0 {
		return o.err
	}
	if o.esc != nil {
		_, o.err = o.esc.Write(p)
	} else {
		_, o.err = o.bw.Write(p)
	}
	o.any, o.lastNL = true, p[len(p)-1] == '\n'
	return o.err
}

// endValue ends a run of the value's bytes: a UTF-8 sequence left
// incomplete at its end is shown as it is, invalid.
func (o *pageWriter) endValue() {
	if o.esc != nil && o.err == nil {
		o.err = o.esc.Flush()
	}
}

// close writes the continuation line t, if any, on a line of its own, as
// appendTrailer does, and flushes.
func (o *pageWriter) close(t string) error {
	o.endValue()
	if t != "" {
		if o.any && !o.lastNL {
			o.frame("\n")
		}
		o.frame(t + "\n")
	}
	if o.err != nil {
		return o.err
	}
	return o.bw.Flush()
}

// writePage writes a page built in memory.
func writePage(w io.Writer, p page, err error) error {
	if err != nil {
		return err
	}
	_, err = w.Write(p.Render())
	return err
}

type page interface{ Render() []byte }

func writeLines(w io.Writer, src source, first, last int64, caps Caps) error {
	c := caps.effective()
	if c.Bytes > 0 {
		p, err := lines(src, first, last, caps)
		return writePage(w, p, err)
	}
	p := newLinesPage(src, first, last, c)
	if first == 1 && last == ToEnd && p.Total == 0 {
		return nil
	}
	if err := checkLines(first, last, p.Total); err != nil {
		return err
	}
	sc := newLineScanner(src)
	if _, err := sc.seek(first); err != nil {
		return err
	}
	stop := p.Last
	if c.Lines > 0 {
		stop = min(stop, first+c.Lines-1)
	}
	out := newPageWriter(w, c.Escape)
	var l Line
	for k := first; k <= stop; k++ {
		out.gutter(k)
		start := sc.off
		end, newline, err := sc.copyLine(out.value)
		if err != nil {
			return err
		}
		l = Line{N: k, Start: start, End: end, newline: newline}
	}
	p.Next = nextLines(stop-first+1, l.N, p.Last, p.Total, c)
	p.Lines = []Line{l} // the last line shown is all the continuation line needs
	return out.close(p.Trailer())
}

// copyLine hands the line the scanner is at, newline included, to write,
// a buffer at a time, and moves to the next line. It returns the offset
// just past the line and whether it ends in a newline.
func (s *lineScanner) copyLine(write func([]byte) error) (int64, bool, error) {
	pos := s.off
	newline := false
	for pos < s.src.Size() {
		w, err := s.window(pos)
		if err != nil {
			return 0, false, err
		}
		take := len(w)
		if j := bytes.IndexByte(w, '\n'); j >= 0 {
			take, newline = j+1, true
		}
		if err := write(w[:take]); err != nil {
			return 0, false, err
		}
		pos += int64(take)
		if newline {
			break
		}
	}
	s.off = pos
	s.line++
	return pos, newline, nil
}

func writeBytes(w io.Writer, src source, start, end int64, caps Caps) error {
	c := caps.effective()
	if c.Bytes > 0 {
		p, err := bytesPage(src, start, end, caps)
		return writePage(w, p, err)
	}
	p, stop, err := planBytes(src, start, end, c)
	if err != nil {
		return err
	}
	out := newPageWriter(w, c.Escape)
	buf := make([]byte, min(int64(scanChunk), stop-start))
	for o := start; o < stop; {
		n, err := readFull(src, buf[:min(int64(len(buf)), stop-o)], o)
		if err != nil {
			return err
		}
		if n == 0 {
			return io.ErrUnexpectedEOF
		}
		if err := out.value(buf[:n]); err != nil {
			return err
		}
		o += int64(n)
	}
	return out.close(p.Trailer())
}

func writeQuery(w io.Writer, src source, o QueryOptions, caps Caps) error {
	c := caps.effective()
	if c.Bytes > 0 {
		p, err := query(src, o, caps)
		return writePage(w, p, err)
	}
	m, err := o.prepare()
	if err != nil {
		return err
	}
	win, err := o.window(src)
	if err != nil {
		return err
	}
	num := newLineScanner(src)
	afterOff, err := afterOffset(src, num, max(o.AfterLine, win.lo-1))
	if err != nil {
		return err
	}
	st := &queryStream{src: src, c: c, ctx: o.Context, lo: win.lo, n: win.hi,
		num: num, rd: newLineScanner(src), out: newPageWriter(w, c.Escape)}
	r := scanResult{afterOff: afterOff, from: win.from, to: win.to, emit: st.match}
	if err := m.scan(src, &r); err != nil {
		return err
	}
	next := int64(0)
	if st.shown > 0 && r.before+st.shown < r.total {
		next = st.lastMatch
	}
	return st.out.close(queryTrailer(r.total, r.before, st.shown, o.AfterLine, win.String(), nil, next))
}

// queryStream writes the matches of a search as the search finds them,
// with the rules of QueryPage.fill under a line cap alone.
type queryStream struct {
	src       source
	c         capped
	ctx       int64
	lo, n     int64        // the lines searched
	num       *lineScanner // numbers the matches, moving forward
	rd        *lineScanner // reads the lines shown, moving forward
	out       *pageWriter
	count     int64 // lines written
	last      int64 // the last line written
	shown     int64 // matches shown
	lastMatch int64 // the last of them
	done      bool  // the line cap is reached: only counting now
}

func (st *queryStream) match(lineStart int64) error {
	if st.done {
		return nil
	}
	k, err := st.num.seekOffset(lineStart)
	if err != nil {
		return err
	}
	if k <= st.last {
		st.shown, st.lastMatch = st.shown+1, k // shown as context already
	}
	from, to := max(st.lo, k-st.ctx, st.last+1), min(st.n, k+st.ctx)
	if from > to {
		return nil
	}
	if st.c.Lines > 0 && st.count+to-from+1 > st.c.Lines {
		st.done = true
		if st.shown > 0 {
			return nil
		}
		from, to = k, k // the first match is shown alone
	}
	if st.ctx > 0 && st.last > 0 && from > st.last+1 {
		st.out.frame("--\n")
	}
	if _, err := st.rd.seek(from); err != nil {
		return err
	}
	for j := from; j <= to; j++ {
		st.out.gutter(j)
		if _, _, err := st.rd.copyLine(st.out.value); err != nil {
			return err
		}
	}
	st.count += to - from + 1
	if k > st.last {
		st.shown, st.lastMatch = st.shown+1, k
	}
	st.last = to
	return st.out.err
}
