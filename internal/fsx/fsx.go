// Package fsx opens the files of a store as every file there may be
// hostile: a symlink is never followed, a FIFO or device is never opened
// for reading or writing in a way that could block, and a file read whole
// is read through a size bound.
package fsx

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrSymlink is the error for a path whose last element is a symlink.
var ErrSymlink = errors.New("is a symlink (symlinks in a store are never followed)")

// ErrNotRegular is the error for a path that is a FIFO, a device, a socket
// or a directory where a regular file belongs.
var ErrNotRegular = errors.New("is not a regular file")

// ErrTooLarge is the error for a file read whole that is larger than its
// bound.
var ErrTooLarge = errors.New("is too large")

// PathError is a refusal of one path, carrying one of the errors above.
type PathError struct {
	Path string
	Err  error
}

func (e *PathError) Error() string { return e.Path + " " + e.Err.Error() }
func (e *PathError) Unwrap() error { return e.Err }

// Refused reports whether err is a refusal of a file that is not what a
// store holds there (a symlink, not a regular file, too large).
func Refused(err error) bool {
	return errors.Is(err, ErrSymlink) || errors.Is(err, ErrNotRegular) || errors.Is(err, ErrTooLarge)
}

// OpenFile opens path with flag, never following a symlink in its last
// element and never blocking on a FIFO, and returns it only when it is a
// regular file (see openFile for how each system does it).
func OpenFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := openFile(path, flag, perm)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &PathError{Path: path, Err: ErrNotRegular}
	}
	return f, nil
}

// Open opens a regular file for reading; see OpenFile.
func Open(path string) (*os.File, error) { return OpenFile(path, os.O_RDONLY, 0) }

// ReadFile reads a regular file whole, refusing one larger than max bytes.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, path, max)
}

// ReadAll reads r to its end, refusing more than max bytes; name is the
// path in the error.
func ReadAll(r io.Reader, name string, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &PathError{Path: name, Err: fmt.Errorf("%w (over %d bytes)", ErrTooLarge, max)}
	}
	return b, nil
}

// ReadUserFile reads a file the user named (a config file, say), which
// may be a symlink — dotfile managers link them — but must be a regular
// file of at most max bytes: a FIFO, a device such as /dev/zero or a huge
// file is refused without blocking or reading it whole.
func ReadUserFile(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|userOpenFlag, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &PathError{Path: path, Err: ErrNotRegular}
	}
	return ReadAll(f, path, max)
}
