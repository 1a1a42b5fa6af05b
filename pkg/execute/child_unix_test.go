//go:build unix

package execute

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// processGone reports whether process pid has ended (a zombie has: an
// orphan may wait long for a reaper in a container).
func processGone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == syscall.ESRCH
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X')
}
