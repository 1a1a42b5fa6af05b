package execute

import (
	"os"
	"syscall"
)

// foregroundTTY is false on Windows: there is no foreground process group
// to hand over. The command shares retval's console, reads it as retval
// would, and a Ctrl+C there reaches both.
func foregroundTTY(*os.File) bool { return false }

func giveTerminal(*os.File) *syscall.SysProcAttr { return nil }

func takeTerminal(*os.File) {}
