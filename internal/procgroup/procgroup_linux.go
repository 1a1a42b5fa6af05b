package procgroup

import "syscall"

// setDeathSignal asks the kernel to SIGKILL the command when retval dies,
// however it dies (SIGKILL included, which retval cannot catch to pass
// on), so that a killed retval does not leave the command running with
// its output going nowhere. It reaches the command itself, not processes
// the command started: those are orphaned as they would be by any
// parent's death. (The signal is tied to the thread that started the
// command; Go's runtime keeps its threads for the life of the process,
// and retval locks none.)
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
