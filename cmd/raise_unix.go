//go:build unix

package cmd

import (
	"os"
	"os/signal"
	"syscall"
)

// raise ends retval by signal s, as s would have ended it uncaught.
func raise(s syscall.Signal) {
	signal.Reset(s)
	syscall.Kill(os.Getpid(), s)
}
