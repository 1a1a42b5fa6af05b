//go:build unix

package fsx

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// userOpenFlag keeps a user's file that is a FIFO from blocking the open.
const userOpenFlag = syscall.O_NONBLOCK

// separators are what may not be in an entry's name.
const separators = "/"

// openFile opens path with O_NOFOLLOW and O_NONBLOCK added, so that a
// FIFO never blocks the open. O_NONBLOCK means nothing once the file is
// known to be regular, which OpenFile checks next.
func openFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, perm)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, &PathError{Path: path, Err: ErrSymlink}
		}
		if errors.Is(err, syscall.ENXIO) || errors.Is(err, syscall.EISDIR) {
			// A FIFO opened for writing without a reader, a directory
			// opened for writing (as Dir.OpenFile has them).
			return nil, &PathError{Path: path, Err: ErrNotRegular}
		}
		return nil, err
	}
	return f, nil
}

// CreateTemp is os.CreateTemp: a new file in dir, opened for reading and
// writing, whose name is pattern with a random string for its last "*".
func CreateTemp(dir, pattern string) (*os.File, error) { return os.CreateTemp(dir, pattern) }
