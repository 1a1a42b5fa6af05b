package execute

import (
	"os"
	"syscall"
)

// Forwarded are the signals the CLI catches so that they do not end
// retval while the command runs: on Windows, a console's Ctrl+C and
// Ctrl+Break (os.Interrupt) and its closing (SIGTERM). The command shares
// the console and gets the same event from it; forwarding an interrupt
// does nothing more there, and a SIGTERM ends the command's job (see
// procgroup.Group.Signal).
var Forwarded = []os.Signal{os.Interrupt, syscall.SIGTERM}
