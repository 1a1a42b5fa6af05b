//go:build !linux

package mcp

import "syscall"

// serverAttr starts the server in a process group of its own. (Only
// Linux can have it killed should the proxy die first.)
func serverAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
