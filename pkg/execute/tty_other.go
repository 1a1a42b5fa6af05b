//go:build unix && !linux

package execute

import "golang.org/x/sys/unix"

// foregroundGroup returns the foreground process group of the terminal
// fd. (Here x/sys reads the C int TIOCGPGRP gives into a Go int, which
// is right on the little-endian systems retval is built for.)
func foregroundGroup(fd int) (int, error) {
	return unix.IoctlGetInt(fd, unix.TIOCGPGRP)
}
