package retain

import (
	"bytes"
	"io"
)

// StubSettings are the settings a stub depends on besides the value. As in
// Limits, a zero field means its default and Unlimited means none.
type StubSettings struct {
	PreviewBytes int64
	PeekLines    int64
	Policy       Policy
	// ReadMore is the form of the read-more line ("" is ReadMorePeek).
	ReadMore ReadMore
	// RunsDir is the store the shell form names; Replay fills it in.
	RunsDir string
}

// Settings returns the stub settings of l under policy p.
func (l Limits) StubSettings(p Policy) StubSettings {
	return StubSettings{PreviewBytes: l.PreviewBytes, PeekLines: l.PeekLines, Policy: p}
}

// Stub renders the stub of a stored value, byte-identical to the one
// retain printed under the same settings.
func (v *Value) Stub(st StubSettings) (string, error) {
	e := Limits{PreviewBytes: st.PreviewBytes, PeekLines: st.PeekLines}.Effective()
	st.PreviewBytes, st.PeekLines = e.PreviewBytes, e.PeekLines
	keep := min(st.PreviewBytes, v.Desc.Size)
	head, err := v.Bytes(0, keep)
	if err != nil {
		return "", err
	}
	tail, err := v.Bytes(v.Desc.Size-keep, v.Desc.Size)
	if err != nil {
		return "", err
	}
	d := &v.Desc
	in := StubInput{ID: d.ID, Size: d.Size, Lines: d.Lines, SHA256: d.SHA256, Meta: metaOf(d),
		Head: head, Tail: tail, PreviewBytes: st.PreviewBytes, PeekLines: st.PeekLines,
		HeaderOnly: st.Policy == PolicyBounded, ReadMore: st.ReadMore, Run: v.Run, RunsDir: st.RunsDir,
		NDJSON: d.NDJSON}
	if !in.HeaderOnly && st.PreviewBytes > 0 && d.Size > st.PreviewBytes {
		if in.FirstNewline, in.LastLineStart, err = v.lineEnds(head, tail); err != nil {
			return "", err
		}
	}
	if d.JSON && !in.HeaderOnly {
		if in.outline, err = jsonStubOutline(v, d.Size, head, st.PreviewBytes); err != nil {
			return "", err
		}
	}
	return RenderStub(in), nil
}

// lineEnds finds what a stub of v needs to know of its first and last
// lines (StubInput.FirstNewline, LastLineStart) when its head and tail
// excerpts cannot tell: only for a value of several lines whose first
// (last) line is longer than them, by reading on from the head (back from
// the tail) to that line's end (start). Every byte read is checked.
func (v *Value) lineEnds(head, tail []byte) (firstNewline, lastLineStart int64, err error) {
	size := v.Desc.Size
	firstNewline = -1
	if v.Desc.Lines < 2 {
		return firstNewline, 0, nil
	}
	buf := make([]byte, min(chunkSize, 64<<10))
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		firstNewline = int64(i)
	} else {
		for off := int64(len(head)); off < size && firstNewline < 0; off += int64(len(buf)) {
			n, err := v.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
			if err != nil && err != io.EOF {
				return 0, 0, err
			}
			if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
				firstNewline = off + int64(i)
			}
		}
	}
	// The newline before the last line: the last one before the final
	// byte (which may be the newline ending the last line).
	end := size - 1
	if len(tail) > 0 {
		if i := bytes.LastIndexByte(tail[:len(tail)-1], '\n'); i >= 0 {
			return firstNewline, size - int64(len(tail)) + int64(i) + 1, nil
		}
		end = size - int64(len(tail))
	}
	for end > 0 {
		off := max(0, end-int64(len(buf)))
		n, err := v.ReadAt(buf[:end-off], off)
		if err != nil && err != io.EOF {
			return 0, 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return firstNewline, off + int64(i) + 1, nil
		}
		end = off
	}
	return firstNewline, 0, nil
}

// Replay rebuilds what the model saw for a call: when the value of call
// exists in run and holds exactly the bytes of in, it returns its stub;
// otherwise it copies in to out unchanged and returns "". It never writes
// to the store, and it never holds more than a chunk of in in memory: the
// input is compared with the stored bytes as it streams.
func (s *Store) Replay(in io.Reader, out io.Writer, run, call string, st StubSettings) (string, error) {
	r, err := s.ReplayResult(in, out, run, call, st)
	if err != nil {
		return "", err
	}
	return r.Stub, nil
}

// ReplayResult is Replay with what retain's Result said: Retained, the
// Descriptor and the Stub when the input is the stored value, Verbatim
// when the input went to out unchanged.
func (s *Store) ReplayResult(in io.Reader, out io.Writer, run, call string, st StubSettings) (*Result, error) {
	verbatim := &Result{Verbatim: true}
	if st.RunsDir == "" {
		st.RunsDir = s.Dir
	}
	v, err := s.openValue(run, call, false)
	if err != nil {
		_, cerr := io.Copy(out, in)
		return verbatim, cerr
	}
	defer v.Close()
	buf := make([]byte, chunkSize)
	mine := make([]byte, chunkSize)
	var off int64
	for {
		n, rerr := io.ReadFull(in, buf)
		if n > 0 {
			same := off+int64(n) <= v.Desc.Size
			if same {
				if _, err := v.ReadAt(mine[:n], off); err != nil && err != io.EOF {
					same = false
				} else {
					same = bytes.Equal(buf[:n], mine[:n])
				}
			}
			if !same {
				// Not this value: print what was read (the earlier part,
				// equal to the value, is read back from it), then the rest.
				if _, err := io.Copy(out, io.NewSectionReader(v, 0, off)); err != nil {
					return nil, err
				}
				if _, err := out.Write(buf[:n]); err != nil {
					return nil, err
				}
				_, err := io.Copy(out, in)
				return verbatim, err
			}
			off += int64(n)
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			return nil, rerr
		}
	}
	if off != v.Desc.Size {
		_, err := io.Copy(out, io.NewSectionReader(v, 0, off))
		return verbatim, err
	}
	stub, err := v.Stub(st)
	if err != nil {
		return nil, err
	}
	d := v.Desc
	return &Result{Retained: true, Descriptor: &d, Stub: stub}, nil
}
