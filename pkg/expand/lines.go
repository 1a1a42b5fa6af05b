package expand

import (
	"slices"

	"github.com/retval/retval/pkg/peek"
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
	offs, err := peek.LineOffsets(v, want)
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
