package iox

import (
	"errors"
	"os"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

var pipeSeq atomic.Uint64

// Pipe returns a connected pair of files, as os.Pipe does, whose read end
// has a working read deadline. os.Pipe's anonymous pipes are synchronous
// on Windows and refuse a deadline, so a process left behind holding the
// write end would keep a reader forever. The read end here is the server
// end of a named pipe opened for overlapped I/O (which the runtime's
// poller serves, deadlines and all); the write end, a child's stdout, is
// an ordinary synchronous handle.
func Pipe() (r, w *os.File, err error) {
	name := `\\.\pipe\retval-` + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(pipeSeq.Add(1), 10) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	name16, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return nil, nil, err
	}
	rh, err := windows.CreateNamedPipe(name16,
		windows.PIPE_ACCESS_INBOUND|windows.FILE_FLAG_OVERLAPPED|windows.FILE_FLAG_FIRST_PIPE_INSTANCE,
		windows.PIPE_TYPE_BYTE|windows.PIPE_READMODE_BYTE|windows.PIPE_WAIT|windows.PIPE_REJECT_REMOTE_CLIENTS,
		1, 0, 64<<10, 0, nil)
	if err != nil {
		return nil, nil, os.NewSyscallError("CreateNamedPipe", err)
	}
	wh, err := windows.CreateFile(name16, windows.GENERIC_WRITE, 0, nil, windows.OPEN_EXISTING, 0, 0)
	if err != nil {
		windows.CloseHandle(rh)
		return nil, nil, os.NewSyscallError("CreateFile", err)
	}
	return os.NewFile(uintptr(rh), "|0"), os.NewFile(uintptr(wh), "|1"), nil
}

// errEmpty is readNow's answer for a pipe that is empty while a writer
// still holds it.
var errEmpty = errors.New("pipe is empty")

// avail is how many bytes the pipe f holds; broken is true when its
// writers are all gone.
func avail(f *os.File) (n uint32, broken bool, err error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, false, err
	}
	var perr error
	if err := rc.Control(func(h uintptr) { n, perr = peekNamedPipe(h) }); err != nil {
		return 0, false, err
	}
	if errors.Is(perr, windows.ERROR_BROKEN_PIPE) {
		return n, true, nil
	}
	return n, false, perr
}

var procPeekNamedPipe = windows.NewLazySystemDLL("kernel32.dll").NewProc("PeekNamedPipe")

// peekNamedPipe is PeekNamedPipe(h, NULL, 0, NULL, &avail, NULL), which
// x/sys/windows does not wrap.
func peekNamedPipe(h uintptr) (uint32, error) {
	var n uint32
	r, _, err := procPeekNamedPipe.Call(h, 0, 0, 0, uintptr(unsafe.Pointer(&n)), 0)
	if r == 0 {
		return 0, err
	}
	return n, nil
}

// buffered returns how many bytes the pipe f holds.
func buffered(f *os.File) int {
	n, _, err := avail(f)
	if err != nil {
		return 0
	}
	return int(n)
}

// readNow reads what f holds without waiting: f.Read would not, once its
// deadline has passed. It returns 0 and no error at the end of the pipe,
// an error when the pipe is empty but a writer is still there. What the
// pipe holds is read with the deadline lifted: those bytes are there, so
// the read does not wait, and only this reader takes from the pipe.
func readNow(f *os.File, b []byte) (int, error) {
	n, broken, err := avail(f)
	switch {
	case err != nil:
		return 0, err
	case n == 0 && broken:
		return 0, nil
	case n == 0:
		return 0, errEmpty
	}
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		return 0, err
	}
	return f.Read(b[:min(len(b), int(n))])
}
