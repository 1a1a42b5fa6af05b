//go:build unix

package procgroup

import (
	"os/exec"
	"syscall"
)

// Group is the command's process group.
type Group struct{ pgid int }

// prepare makes the command start in a process group of its own, and,
// where the kernel has a parent-death signal (Linux) and dieWithParent is
// set, be killed should retval die first (see setDeathSignal).
func prepare(a *syscall.SysProcAttr, dieWithParent bool) {
	a.Setpgid = true
	if dieWithParent {
		setDeathSignal(a)
	}
}

func started(cmd *exec.Cmd, _ bool) (*Group, error) { return &Group{pgid: cmd.Process.Pid}, nil }

// Signal sends sig to every process of the group.
func (g *Group) Signal(sig syscall.Signal) { syscall.Kill(-g.pgid, sig) }

// CommandExited says the command itself has exited: processes it left
// behind keep running (as timeout(1) leaves them). Nothing to do on Unix.
func (g *Group) CommandExited() {}

// Close lets the group go; its processes are not touched.
func (g *Group) Close() {}
