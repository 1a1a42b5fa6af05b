//go:build !linux && !windows

package iox

import "os"

// buffered returns at least how many bytes the pipe f holds: where the
// system cannot say, the most a pipe holds by default (a process left
// behind could add to it while it is read, by at most this much).
func buffered(f *os.File) int { return 1 << 20 }
