//go:build !amd64

package pairindex

var useAVX2 = false

func indexAVX2(p []byte, c1, c2 byte, d int) int { panic("unreachable") }
