//go:build !amd64 && !arm64

package jsonscan

// hasVector: the structural index can be built; elsewhere than amd64 and
// arm64 the scanner searches for quotes and brackets a word at a time.
const hasVector = false

func classify(src []byte, out []blockMasks) { panic("jsonscan: no structural index on this CPU") }
