//go:build unix

package execute

import (
	"os"
	"syscall"
)

// Forwarded are the signals the CLI forwards to the command's process
// group (see Options.Signals): those that would otherwise end retval
// and leave the command running without its reader.
var Forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}
