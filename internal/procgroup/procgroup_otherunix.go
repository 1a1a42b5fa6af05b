//go:build unix && !linux

package procgroup

import "syscall"

// setDeathSignal does nothing where the kernel has no parent-death signal
// that Go's syscall package exposes (macOS, the BSDs but FreeBSD through
// procctl): a killed retval leaves the command running, as a killed shell
// leaves its jobs; a retval that is told to stop (SIGTERM, SIGINT, …)
// forwards it to the command's group first.
func setDeathSignal(*syscall.SysProcAttr) {}
