package jsonscan

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// hasVector: the structural index can be built with AVX2 (x/sys/cpu, as
// internal/xxh3 chooses its vectors).
var hasVector = cpu.X86.HasAVX2

// classify fills out with the masks of src, 64 bytes to a block
// (len(src) is 64×len(out)).
func classify(src []byte, out []blockMasks) {
	if len(out) > 0 {
		_ = src[64*len(out)-1] // the vectors read no further
		classifyAVX2(unsafe.Pointer(&src[0]), len(out), &out[0])
	}
}

//go:noescape
func classifyAVX2(src unsafe.Pointer, blocks int, out *blockMasks)
