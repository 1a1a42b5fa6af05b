// Package procgroup runs a command in a group of processes of its own, so
// that a timeout or a stop reaches everything it started: a process group
// on Unix (Setpgid, as timeout(1) runs a command), a Job object on
// Windows, which has no process groups a parent can signal.
//
// Start sets the command up, starts it and returns its Group. Windows differs in what a signal can be: a console's
// Ctrl+C reaches every process on the console (the command included)
// without retval's help, and the only thing a parent can do to another
// process is end it; so there Signal ends the group for SIGKILL and
// SIGTERM and does nothing for the others.
package procgroup

import (
	"os/exec"
	"syscall"
)

// Killed is the exit status a group ended by Signal(SIGKILL) reports:
// 128+9 on Unix, where the kernel reports the signal; on Windows the
// processes are ended with that exit code, so that the status is the same
// number on every system.
const Killed = 128 + int(syscall.SIGKILL)

// Start starts cmd in a group of its own and returns the group. Fields
// of cmd.SysProcAttr the caller set are kept. With dieWithParent, the
// command is killed should retval die before it exits, where the system
// can do that (Linux: the command itself; Windows: its whole job).
func Start(cmd *exec.Cmd, dieWithParent bool) (*Group, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	prepare(cmd.SysProcAttr, dieWithParent)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return started(cmd, dieWithParent)
}
