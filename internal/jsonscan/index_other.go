//go:build !amd64

package jsonscan

// hasAVX2: the structural index can be built; elsewhere than amd64 the
// scanner searches for quotes and brackets a word at a time.
const hasAVX2 = false

func classify(src []byte, out []blockMasks) { panic("jsonscan: no structural index on this CPU") }
