//go:build unix

package iox

import (
	"os"

	"golang.org/x/sys/unix"
)

// Pipe is os.Pipe: its read end is non-blocking, so its read deadline
// works.
func Pipe() (r, w *os.File, err error) { return os.Pipe() }

// readNow reads what f holds without waiting: f.Read would not, once its
// deadline has passed. The pipe is non-blocking (os.Pipe makes it so).
// It returns 0 and no error at the end of the pipe, an error when the
// pipe is empty but a writer is still there.
func readNow(f *os.File, b []byte) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var rerr error
	if err := rc.Control(func(fd uintptr) { n, rerr = unix.Read(int(fd), b) }); err != nil {
		return 0, err
	}
	return n, rerr
}
