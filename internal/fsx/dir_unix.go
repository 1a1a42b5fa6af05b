//go:build unix

package fsx

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Dir is an open directory. Every operation names an entry of it, one
// path element, and none follows a symlink in that entry's place: a
// symlink is opened as nothing, listed and removed as the link itself.
// Working from the descriptor rather than from a path means that a
// directory above that is swapped for a symlink meanwhile cannot redirect
// anything (restic and rm(1) work the same way).
type Dir struct {
	fd   int
	path string // for messages only
}

// OpenRoot opens the directory at path, following symlinks in it as any
// path is followed: it is the directory a user named (a runs-dir may well
// be a link to another disk). Everything below it is opened with Dir's
// methods, which never follow.
func OpenRoot(path string) (*Dir, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOTDIR) {
			return nil, &PathError{Path: path, Err: ErrNotDir}
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return &Dir{fd: fd, path: path}, nil
}

// Close lets the descriptor go.
func (d *Dir) Close() error {
	if d == nil || d.fd < 0 {
		return nil
	}
	err := unix.Close(d.fd)
	d.fd = -1
	return err
}

// OpenDir opens the entry name as a directory, without following it: a
// symlink is ErrSymlink, anything else that is not a directory ErrNotDir
// (both inside a *PathError); a missing entry is fs.ErrNotExist.
func (d *Dir) OpenDir(name string) (*Dir, error) {
	if err := d.checkName(name); err != nil {
		return nil, err
	}
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			if fi, lerr := d.Lstat(name); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
				return nil, &PathError{Path: d.Join(name), Err: ErrSymlink}
			}
			return nil, &PathError{Path: d.Join(name), Err: ErrNotDir}
		}
		return nil, d.pathErr("open", name, err)
	}
	return &Dir{fd: fd, path: d.Join(name)}, nil
}

// MkdirOpen opens the directory name, creating it first (with perm) when
// it is not there. A directory it creates is made durable: d is synced
// before it returns, so that a power loss cannot take the new entry away.
// It never follows a symlink in name's place (see OpenDir).
func (d *Dir) MkdirOpen(name string, perm fs.FileMode) (*Dir, error) {
	if err := d.checkName(name); err != nil {
		return nil, err
	}
	err := unix.Mkdirat(d.fd, name, uint32(perm.Perm()))
	switch {
	case err == nil:
		if err := d.Sync(); err != nil {
			return nil, err
		}
	case !errors.Is(err, unix.EEXIST):
		return nil, d.pathErr("mkdir", name, err)
	}
	return d.OpenDir(name)
}

// Sync flushes the directory itself to stable storage: the entries that
// were created, renamed or removed in it.
func (d *Dir) Sync() error {
	if TestHookSync != nil {
		TestHookSync(d.path)
	}
	if skipSync() {
		return nil
	}
	if err := unix.Fsync(d.fd); err != nil {
		return &fs.PathError{Op: "sync", Path: d.path, Err: err}
	}
	return nil
}

// Rename moves the entry old of d to the entry new of dir to (replacing a
// file there, as rename(2) does), then syncs both directories, so that
// after a power loss the entry is in one of them, never lost.
func (d *Dir) Rename(old string, to *Dir, new string) error {
	if err := d.checkName(old); err != nil {
		return err
	}
	if err := to.checkName(new); err != nil {
		return err
	}
	if err := unix.Renameat(d.fd, old, to.fd, new); err != nil {
		return &os.LinkError{Op: "rename", Old: d.Join(old), New: to.Join(new), Err: err}
	}
	if err := to.Sync(); err != nil {
		return err
	}
	if to.fd != d.fd {
		return d.Sync()
	}
	return nil
}

// Remove removes the entry name: a file, a symlink (the link, never its
// target) or an empty directory. A missing entry is fs.ErrNotExist.
func (d *Dir) Remove(name string) error {
	if err := d.checkName(name); err != nil {
		return err
	}
	err := unix.Unlinkat(d.fd, name, 0)
	if errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EPERM) {
		// EPERM is what some systems answer for unlink(2) of a directory.
		if rerr := unix.Unlinkat(d.fd, name, unix.AT_REMOVEDIR); rerr == nil || !errors.Is(rerr, unix.ENOTDIR) {
			err = rerr
		}
	}
	if err != nil {
		return d.pathErr("remove", name, err)
	}
	return nil
}

// RemoveAll removes the entry name and, when it is a directory, everything
// in it. It never crosses a symlink: a symlink anywhere in the tree is
// unlinked, never followed, and every directory is entered through a
// descriptor opened without following, relative to its parent's, so
// nothing outside d is touched even if the tree is changed meanwhile. A
// missing entry is no error.
func (d *Dir) RemoveAll(name string) error {
	if err := d.checkName(name); err != nil {
		return err
	}
	return d.removeAll(name)
}

func (d *Dir) removeAll(name string) error {
	err := unix.Unlinkat(d.fd, name, 0)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	if !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EPERM) {
		return d.pathErr("remove", name, err)
	}
	child, oerr := d.OpenDir(name)
	switch {
	case errors.Is(oerr, fs.ErrNotExist):
		return nil
	case errors.Is(oerr, ErrSymlink) || errors.Is(oerr, ErrNotDir):
		// Replaced by something that is not a directory since: unlink that.
		if err := unix.Unlinkat(d.fd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return d.pathErr("remove", name, err)
		}
		return nil
	case oerr != nil:
		return oerr
	}
	defer child.Close()
	names, err := child.Names()
	if err != nil {
		return err
	}
	var first error
	for _, n := range names {
		if err := child.removeAll(n); err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return first
	}
	if err := unix.Unlinkat(d.fd, name, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
		return d.pathErr("remove", name, err)
	}
	return nil
}

// Names lists the directory's entries (without . and ..), unsorted.
func (d *Dir) Names() ([]string, error) {
	// A descriptor of its own, so that its read offset is not d's.
	fd, err := unix.Openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.path, Err: err}
	}
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	return f.Readdirnames(-1)
}

// Lstat describes the entry name itself, a symlink as a symlink.
func (d *Dir) Lstat(name string) (fs.FileInfo, error) {
	if err := d.checkName(name); err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, d.pathErr("lstat", name, err)
	}
	return &fileInfo{name: name, st: st}, nil
}

// Stat describes the directory itself.
func (d *Dir) Stat() (fs.FileInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: d.path, Err: err}
	}
	return &fileInfo{name: filepath.Base(d.path), st: st}, nil
}

// OpenFile opens the entry name with flag (O_NOFOLLOW and O_NONBLOCK
// added, as fsx.OpenFile does) and returns it only when it is a regular
// file: a symlink is ErrSymlink, a FIFO, device or directory ErrNotRegular.
func (d *Dir) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	if err := d.checkName(name); err != nil {
		return nil, err
	}
	fd, err := unix.Openat(d.fd, name, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		switch {
		case errors.Is(err, unix.ELOOP):
			return nil, &PathError{Path: d.Join(name), Err: ErrSymlink}
		case errors.Is(err, unix.ENXIO), errors.Is(err, unix.EISDIR):
			return nil, &PathError{Path: d.Join(name), Err: ErrNotRegular}
		}
		return nil, d.pathErr("open", name, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, d.pathErr("stat", name, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, &PathError{Path: d.Join(name), Err: ErrNotRegular}
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, d.pathErr("open", name, err)
	}
	return os.NewFile(uintptr(fd), d.Join(name)), nil
}

// fileInfo is an fs.FileInfo of an fstatat(2) result.
type fileInfo struct {
	name string
	st   unix.Stat_t
}

func (fi *fileInfo) Name() string       { return fi.name }
func (fi *fileInfo) Size() int64        { return fi.st.Size }
func (fi *fileInfo) IsDir() bool        { return fi.Mode().IsDir() }
func (fi *fileInfo) ModTime() time.Time { return time.Unix(fi.st.Mtim.Unix()) }
func (fi *fileInfo) Sys() any           { return &fi.st }

func (fi *fileInfo) Mode() fs.FileMode {
	m := fs.FileMode(fi.st.Mode & 0o777)
	switch fi.st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	if fi.st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if fi.st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if fi.st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}
