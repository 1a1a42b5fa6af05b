//go:build unix

package fsx

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// ReadSmall is ReadFile for the store's small files read by the thousand
// (descriptors, when a run is scanned): the same refusals and errors, in
// four system calls (open, fstat, read, close) and one allocation, without
// an *os.File.
func ReadSmall(path string, max int64) ([]byte, error) {
	var fd int
	var err error
	for {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, &PathError{Path: path, Err: ErrSymlink}
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, &PathError{Path: path, Err: ErrNotRegular}
	}
	b := make([]byte, 0, min(st.Size, max)+1)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // the file grew: make room
		}
		n, err := unix.Read(fd, b[len(b):cap(b)])
		if errors.Is(err, syscall.EINTR) || errors.Is(err, syscall.EAGAIN) {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		b = b[:len(b)+n]
		if int64(len(b)) > max {
			return nil, &PathError{Path: path, Err: fmt.Errorf("%w (over %d bytes)", ErrTooLarge, max)}
		}
		if n == 0 || int64(len(b)) == st.Size && len(b) < cap(b) {
			return b, nil // end of file, or all fstat counted with room to spare
		}
	}
}
