package fsx

import (
	"os"

	"golang.org/x/sys/unix"
)

// StartWriteback asks the kernel to start writing [off, off+n) of f to
// disk now, without waiting for it. A file written sequentially and then
// fsynced spends the fsync waiting for everything it wrote; started as it
// goes, most of that writeback overlaps the writing, and the fsync waits
// only for the tail. It is advice: an error is ignored, and the fsync
// still decides durability.
func StartWriteback(f *os.File, off, n int64) {
	_ = unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
