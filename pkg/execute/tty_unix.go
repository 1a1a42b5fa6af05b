//go:build unix

package execute

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// foregroundTTY reports whether f is a terminal whose foreground process
// group is retval's: the command can then be given it.
func foregroundTTY(f *os.File) bool {
	pgrp, err := foregroundGroup(int(f.Fd()))
	return err == nil && pgrp == syscall.Getpgrp()
}

// giveTerminal is the command's start attributes that make its process
// group the foreground of the terminal f, as a shell does for a job.
func giveTerminal(f *os.File) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Foreground: true, Ctty: int(f.Fd())}
}

// takeTerminal makes retval's process group the terminal's foreground
// again. retval is then in the background, where changing it stops a
// process by SIGTTOU unless ignored: ignored just for that call, so that
// no command inherits it.
func takeTerminal(f *os.File) {
	signal.Ignore(syscall.SIGTTOU)
	defer signal.Reset(syscall.SIGTTOU)
	unix.IoctlSetPointerInt(int(f.Fd()), unix.TIOCSPGRP, syscall.Getpgrp())
}
