package iox

import (
	"errors"
	"io"
	"os"
)

// PipeReader reads a pipe until its read deadline, set by the caller once
// the writer it waits for is gone (os.File.SetReadDeadline), has passed.
// The deadline only ends the wait for more: what the pipe holds when it
// passes (all the writer wrote before it exited, however late this
// reader comes) is still read, and no more, so a process left behind
// that keeps writing cannot keep the reader.
type PipeReader struct {
	f    *os.File
	left int  // bytes still to read after the deadline (-1: it has not passed)
	end  bool // the reading is over
	cut  bool // ... at the deadline, with a writer still there
}

// NewPipeReader returns a PipeReader of f, the read end of a pipe made by
// Pipe (on Unix, os.Pipe is the same).
func NewPipeReader(f *os.File) *PipeReader { return &PipeReader{f: f, left: -1} }

// Cut reports whether the reading ended at the deadline with a writer
// still holding the pipe: the end of what was read may then be the
// middle of something that writer was writing. A pipe whose writers were
// all gone, read to its end past the deadline, is not cut.
func (u *PipeReader) Cut() bool { return u.cut }

func (u *PipeReader) Read(b []byte) (int, error) {
	switch {
	case u.end:
		return 0, io.EOF
	case len(b) == 0:
		return 0, nil
	}
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
		// What the pipe held at the deadline is read. It was cut unless
		// the pipe is at its end, its writers gone; the byte a writer
		// still there may have added since is read to know it, and
		// dropped: it came after the bound.
		var one [1]byte
		n, err := readNow(u.f, one[:])
		u.end, u.cut = true, n != 0 || err != nil
		return 0, io.EOF
	}
	n, err := readNow(u.f, b[:min(len(b), u.left)])
	if n <= 0 || err != nil {
		// The end of the pipe (0: its writers are gone), or nothing more
		// in it now (a writer is still there).
		u.end, u.cut = true, err != nil
		return 0, io.EOF
	}
	u.left -= n
	return n, nil
}
