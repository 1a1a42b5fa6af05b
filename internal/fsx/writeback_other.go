//go:build !linux

package fsx

import "os"

// StartWriteback does nothing here: the fsync alone writes the file out.
func StartWriteback(f *os.File, off, n int64) {}
