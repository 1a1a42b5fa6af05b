package fsx

import (
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// Owner: Windows has no uids (its owners are SIDs, and a directory of
// another user is refused by its ACL), so ok is always false.
func Owner(fi fs.FileInfo) (uid int, ok bool) { return 0, false }

// SetTimes sets the access and modification times of the open file f to
// t, through its handle (never through a path that may have changed).
func SetTimes(f *os.File, t time.Time) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	ft := windows.NsecToFiletime(t.UnixNano())
	var serr error
	if err := rc.Control(func(h uintptr) { serr = windows.SetFileTime(windows.Handle(h), nil, &ft, &ft) }); err != nil {
		return err
	}
	return serr
}
