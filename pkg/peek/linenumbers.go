package peek

import (
	"fmt"

	"github.com/retval/retval/pkg/retain"
)

// LineNumbers returns the line holding each offset of offs (ascending,
// each less than the value's size), from 1, in one forward pass of the
// scanner every peek uses, jumping through the value's line index: the
// inverse of LineOffsets, with which retval ui turns a byte range or a
// pointer's span into the lines it covers.
func LineNumbers(v *retain.Value, offs []int64) ([]int64, error) {
	sc := newLineScanner(sourceOf(v))
	out := make([]int64, len(offs))
	for i, o := range offs {
		if o < 0 || o >= v.Size() || i > 0 && o < offs[i-1] {
			return nil, fmt.Errorf("offset %d: want ascending offsets below the size, %d", o, v.Size())
		}
		n, err := sc.seekOffset(o)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}
