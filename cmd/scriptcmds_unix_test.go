//go:build unix

package cmd

import (
	"time"

	"golang.org/x/sys/unix"
)

// makeFIFO makes a named pipe at path.
func makeFIFO(path string) error { return unix.Mkfifo(path, 0o600) }

// lchtimes sets the access and modification times of path itself (a
// symlink's own, never its target's).
func lchtimes(path string, t time.Time) error {
	ut := []unix.Timespec{unix.NsecToTimespec(t.UnixNano()), unix.NsecToTimespec(t.UnixNano())}
	return unix.UtimesNanoAt(unix.AT_FDCWD, path, ut, unix.AT_SYMLINK_NOFOLLOW)
}
