package jsonscan

import "unsafe"

// hasVector: the structural index can be built; every arm64 CPU has
// Advanced SIMD (NEON).
const hasVector = true

// classify fills out with the masks of src, 64 bytes to a block
// (len(src) is 64×len(out)).
func classify(src []byte, out []blockMasks) {
	if len(out) > 0 {
		_ = src[64*len(out)-1] // the vectors read no further
		classifyNEON(unsafe.Pointer(&src[0]), len(out), &out[0])
	}
}

//go:noescape
func classifyNEON(src unsafe.Pointer, blocks int, out *blockMasks)
