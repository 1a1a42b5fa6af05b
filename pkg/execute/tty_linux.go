package execute

import "golang.org/x/sys/unix"

// foregroundGroup returns the foreground process group of the terminal
// fd. TIOCGPGRP gives a pid_t, a C int: read as one (a Go int is twice
// its size on 64-bit systems, where a big-endian one would put the group
// in its upper half, and no group would ever be retval's).
func foregroundGroup(fd int) (int, error) {
	pgrp, err := unix.IoctlGetUint32(fd, unix.TIOCGPGRP)
	return int(int32(pgrp)), err
}
