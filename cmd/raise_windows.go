package cmd

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// raise ends retval as the console event behind s would have ended it
// uncaught: Windows' default handler exits with STATUS_CONTROL_C_EXIT.
// (A process cannot send itself a console event alone; one sent to the
// console would reach the processes of every other program on it.)
func raise(syscall.Signal) {
	windows.ExitProcess(uint32(windows.STATUS_CONTROL_C_EXIT))
}
