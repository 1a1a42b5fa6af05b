package s3test

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes cmd killed when the test binary dies, whether or
// not it stopped the server: a test binary killed by its timeout leaves
// no gateway behind.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
