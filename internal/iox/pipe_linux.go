package iox

import (
	"os"

	"golang.org/x/sys/unix"
)

// buffered returns how many bytes the pipe f holds.
func buffered(f *os.File) int {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	rc.Control(func(fd uintptr) {
		n, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ) // FIONREAD
	})
	return max(n, 0)
}
