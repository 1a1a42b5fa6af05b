package iox

import (
	"os"

	"golang.org/x/sys/unix"
)

// buffered returns how many bytes the pipe f holds. FIONREAD gives a C
// int: read as one (a Go int is twice its size on 64-bit systems, where a
// big-endian one would put the count in its upper half).
func buffered(f *os.File) int {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	var n uint32
	rc.Control(func(fd uintptr) {
		n, _ = unix.IoctlGetUint32(int(fd), unix.TIOCINQ) // FIONREAD
	})
	return max(int(int32(n)), 0)
}
