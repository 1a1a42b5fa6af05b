package pairindex

import "golang.org/x/sys/cpu"

var useAVX2 = cpu.X86.HasAVX2

// indexAVX2 is Index over the positions 0 ≤ i < len(p)-d, a multiple of
// 32, 32 at a time.
//
//go:noescape
func indexAVX2(p []byte, c1, c2 byte, d int) int
