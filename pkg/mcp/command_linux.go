package mcp

import "syscall"

// serverAttr starts the server in a process group of its own, killed
// should the proxy die first.
func serverAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
