// Package pairindex finds the first place where two bytes stand at a
// given distance from each other: the candidates of a substring search
// by two of its bytes at once, which are far fewer than those of its
// rarest byte alone where no byte of it is rare (memchr's "packed pair").
package pairindex

import "bytes"

// Index returns the least i with p[i] == c1 and p[i+d] == c2 (d ≥ 0),
// or -1.
func Index(p []byte, c1, c2 byte, d int) int {
	if d < 0 || d >= len(p) {
		return -1
	}
	i := 0
	if useAVX2 {
		n := (len(p) - d) &^ 31 // whole 32-byte blocks of positions
		if n > 0 {
			if k := indexAVX2(p[:n+d], c1, c2, d); k >= 0 {
				return k
			}
			i = n
		}
	}
	return indexGeneric(p, c1, c2, d, i)
}

// indexGeneric is Index from position i on: candidates by c1 alone,
// found with IndexByte (vectorised on every architecture Go has assembly
// for), so that without the pair scan a search costs what a search by one
// byte does.
func indexGeneric(p []byte, c1, c2 byte, d, i int) int {
	for i+d < len(p) {
		k := bytes.IndexByte(p[i:len(p)-d], c1)
		if k < 0 {
			return -1
		}
		if i += k; p[i+d] == c2 {
			return i
		}
		i++
	}
	return -1
}
