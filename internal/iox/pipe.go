package iox

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// PipeReader reads a pipe until its read deadline, set by the caller once
// the writer it waits for is gone (os.File.SetReadDeadline), has passed.
// The deadline only ends the wait for more: what the pipe holds when it
// passes (all the writer wrote before it exited, however late this
// reader comes) is still read, and no more, so a process left behind
// that keeps writing cannot keep the reader.
type PipeReader struct {
	f    *os.File
	left int // bytes still to read after the deadline (-1: it has not passed)
}

// NewPipeReader returns a PipeReader of f, a pipe made by os.Pipe.
func NewPipeReader(f *os.File) *PipeReader { return &PipeReader{f: f, left: -1} }

// Cut reports whether the deadline has passed: the end of what was read
// may then be the middle of something a writer left behind was writing.
func (u *PipeReader) Cut() bool { return u.left >= 0 }

func (u *PipeReader) Read(b []byte) (int, error) {
	if u.left < 0 {
		n, err := u.f.Read(b)
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return n, err
		}
		if u.left = buffered(u.f); n > 0 {
			return n, nil
		}
	}
	if u.left == 0 {
		return 0, io.EOF
	}
	n, err := readNow(u.f, b[:min(len(b), u.left)])
	if n <= 0 || err != nil {
		u.left = 0
		return 0, io.EOF
	}
	u.left -= n
	return n, nil
}

// readNow reads what f holds without waiting: f.Read would not, once its
// deadline has passed. The pipe is non-blocking (os.Pipe makes it so).
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
