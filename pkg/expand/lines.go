package expand

import (
	"bytes"
	"io"
	"slices"

	"github.com/retval/retval/pkg/retain"
)

// Line ranges of a template are located all at once, value by value: a
// template that rebuilds a file from many ranges names lines in order, so
// one forward scan (jumping through the value's line index over gaps)
// finds every range where locating each alone would rescan the stretch
// from its nearest index entry every time. Select remains the one place
// that judges a line range: only ranges Select would accept are located
// here, and the test checks both agree.

// lineRef is a line range waiting to be located.
type lineRef struct {
	node, part int
	ref        Ref
}

// batchable reports whether Select would accept the line range r of v, so
// that locating it cannot fail but on a read.
func batchable(v *retain.Value, r Ref) bool {
	return r.Kind == RefLines && r.checkDigest(&v.Desc) == nil && r.Start >= 1 && r.Start <= r.End && r.End <= v.Desc.Lines
}

// locateLines sets the selections of the line ranges refs of v.
func (p *Plan) locateLines(v *retain.Value, refs []lineRef) error {
	var want []int64
	for _, lr := range refs {
		want = append(want, lr.ref.Start)
		if lr.ref.End < v.Desc.Lines {
			want = append(want, lr.ref.End+1)
		}
	}
	slices.Sort(want)
	want = slices.Compact(want)
	offs, err := lineOffsets(v, want)
	if err != nil {
		return err
	}
	at := func(line int64) int64 {
		if line > v.Desc.Lines {
			return v.Size()
		}
		i, _ := slices.BinarySearch(want, line)
		return offs[i]
	}
	for _, lr := range refs {
		p.sels[lr.node][lr.part] = &Selection{Ref: lr.ref, Value: v, Start: at(lr.ref.Start), End: at(lr.ref.End + 1)}
	}
	return nil
}

// lineOffsets returns the offset at which each line of want (ascending,
// each from 1 to the value's line count) starts.
func lineOffsets(v *retain.Value, want []int64) ([]int64, error) {
	out := make([]int64, len(want))
	line, off := int64(1), int64(0)
	ix := v.Index()
	buf := make([]byte, retain.BlockSize)
	var win []byte // bytes [winOff, winOff+len(win)) of the value
	winOff := int64(0)
	for i, target := range want {
		if ix != nil {
			if at, o := ix.LineStart(target); at > line {
				line, off = at, o
			}
		}
		for line < target {
			if off < winOff || off >= winOff+int64(len(win)) {
				n := min(int64(len(buf)), v.Size()-off)
				if n <= 0 {
					return nil, io.ErrUnexpectedEOF
				}
				k, err := v.ReadAt(buf[:n], off)
				if int64(k) < n {
					if err == nil || err == io.EOF {
						err = io.ErrUnexpectedEOF
					}
					return nil, err
				}
				win, winOff = buf[:n], off
			}
			rest := win[off-winOff:]
			if c := int64(bytes.Count(rest, nl)); line+c < target {
				line += c
				off += int64(len(rest))
				continue
			}
			for line < target {
				j := bytes.IndexByte(rest, '\n')
				off += int64(j + 1)
				rest = rest[j+1:]
				line++
			}
		}
		out[i] = off
	}
	return out, nil
}

var nl = []byte{'\n'}
