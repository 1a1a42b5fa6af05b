//go:build unix

package local

import (
	"os"

	"golang.org/x/sys/unix"
)

// fileID is what tells a file apart from any other, and from itself
// before a write: a file replaced or written to has another.
type fileID struct {
	dev, ino     uint64
	size         int64
	mtime, ctime unix.Timespec
}

// lstatID is the identity of the file at path (not following a symlink);
// ok is false where it cannot be had or path is not a regular file.
func lstatID(path string) (fileID, bool) {
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil {
		return fileID{}, false
	}
	return idOf(&st)
}

// fstatID is the identity of the open file f.
func fstatID(f *os.File) (fileID, bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return fileID{}, false
	}
	var st unix.Stat_t
	if cerr := rc.Control(func(fd uintptr) { err = unix.Fstat(int(fd), &st) }); cerr != nil || err != nil {
		return fileID{}, false
	}
	return idOf(&st)
}

func idOf(st *unix.Stat_t) (fileID, bool) {
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), uint64(st.Ino), st.Size, st.Mtim, st.Ctim}, true
}
