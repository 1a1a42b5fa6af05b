package fsx

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// Dir is an open directory. Every operation names an entry of it, one
// path element, and none follows a symlink or junction in that entry's
// place: one is opened as nothing, listed and removed as the link itself.
// On Windows a Dir is an os.Root, which works from a handle on the
// directory as openat(2) does (NtCreateFile relative to it), so a
// directory above that is swapped for a junction meanwhile cannot
// redirect anything — except Rename between two directories, which goes
// by path (MoveFileEx).
type Dir struct {
	root *os.Root
	path string // for messages only
}

// OpenRoot opens the directory at path, following symlinks in it as any
// path is followed: it is the directory a user named (a runs-dir may well
// be a link to another disk). Everything below it is opened with Dir's
// methods, which never follow. The handle is opened relative to one on
// its parent, as os.Root opens every directory below a root: with
// FILE_SHARE_DELETE, so that holding it does not stop the directory from
// being renamed or removed (gc renames a run away while readers may hold
// it), as an os.OpenRoot handle would.
func OpenRoot(path string) (*Dir, error) {
	r, err := openShared(path)
	if err != nil {
		if fi, serr := os.Stat(path); serr == nil && !fi.IsDir() {
			return nil, &PathError{Path: path, Err: ErrNotDir}
		}
		return nil, err
	}
	return &Dir{root: r, path: path}, nil
}

func openShared(path string) (*os.Root, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	real, err = filepath.Abs(real)
	if err != nil {
		return nil, err
	}
	parent := filepath.Dir(real)
	if parent == real {
		return os.OpenRoot(real) // a volume's root: nothing above it
	}
	p, err := os.OpenRoot(parent)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	r, err := p.OpenRoot(filepath.Base(real))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: underlying(err)}
	}
	return r, nil
}

// Close lets the handle go.
func (d *Dir) Close() error {
	if d == nil || d.root == nil {
		return nil
	}
	err := d.root.Close()
	d.root = nil
	return err
}

// OpenDir opens the entry name as a directory, without following it: a
// symlink or junction is ErrSymlink, anything else that is not a
// directory ErrNotDir (both inside a *PathError); a missing entry is
// fs.ErrNotExist. os.Root would follow a link that stays inside it, so
// the entry is looked at first and the directory opened is checked to be
// the one looked at.
func (d *Dir) OpenDir(name string) (*Dir, error) {
	if err := d.checkName(name); err != nil {
		return nil, err
	}
	fi, err := d.root.Lstat(name)
	if err != nil {
		return nil, d.pathErr("open", name, underlying(err))
	}
	switch {
	case isReparseInfo(fi):
		return nil, &PathError{Path: d.Join(name), Err: ErrSymlink}
	case !fi.IsDir():
		return nil, &PathError{Path: d.Join(name), Err: ErrNotDir}
	}
	r, err := d.root.OpenRoot(name)
	if err != nil {
		return nil, d.pathErr("open", name, underlying(err))
	}
	if now, err := r.Stat("."); err != nil || !os.SameFile(fi, now) {
		r.Close()
		return nil, &PathError{Path: d.Join(name), Err: ErrSymlink} // replaced since the Lstat
	}
	return &Dir{root: r, path: d.Join(name)}, nil
}

// MkdirOpen opens the directory name, creating it first (with perm) when
// it is not there. It never follows a symlink in name's place (see
// OpenDir).
func (d *Dir) MkdirOpen(name string, perm fs.FileMode) (*Dir, error) {
	if err := d.checkName(name); err != nil {
		return nil, err
	}
	err := d.root.Mkdir(name, perm)
	switch {
	case err == nil:
		if err := d.Sync(); err != nil {
			return nil, err
		}
	case !errors.Is(err, fs.ErrExist):
		return nil, d.pathErr("mkdir", name, underlying(err))
	}
	return d.OpenDir(name)
}

// Sync does nothing on Windows but tell TestHookSync: a directory cannot
// be flushed there (FlushFileBuffers wants a handle opened for writing,
// which a directory's is not), and NTFS journals the directory entries
// itself. restic and SQLite do not sync directories on Windows either.
func (d *Dir) Sync() error {
	if TestHookSync != nil {
		TestHookSync(d.path)
	}
	return nil
}

// Rename moves the entry old of d to the entry new of dir to, replacing a
// file there. Within one directory (the atomic replace of a file by its
// new version) it is os.Root's rename: relative to the directory's
// handle, with POSIX semantics where the system has them (Windows 10
// 1607 and later on NTFS), so that a file a reader holds open is still
// replaced, as rename(2) replaces it; MoveFileEx would fail there with
// access denied. Between two directories it is
// MoveFileEx(MOVEFILE_REPLACE_EXISTING|MOVEFILE_WRITE_THROUGH), which
// renames a link as itself and does not return before the move is on
// disk.
func (d *Dir) Rename(old string, to *Dir, new string) error {
	if err := d.checkName(old); err != nil {
		return err
	}
	if err := to.checkName(new); err != nil {
		return err
	}
	if to == d || to.path == d.path {
		if err := d.root.Rename(old, new); err != nil {
			return &os.LinkError{Op: "rename", Old: d.Join(old), New: to.Join(new), Err: underlying(err)}
		}
		return d.Sync()
	}
	from16, err := windows.UTF16PtrFromString(fixLongPath(d.Join(old)))
	if err != nil {
		return err
	}
	to16, err := windows.UTF16PtrFromString(fixLongPath(to.Join(new)))
	if err != nil {
		return err
	}
	if err := windows.MoveFileEx(from16, to16, windows.MOVEFILE_REPLACE_EXISTING|windows.MOVEFILE_WRITE_THROUGH); err != nil {
		return &os.LinkError{Op: "rename", Old: d.Join(old), New: to.Join(new), Err: err}
	}
	if err := to.Sync(); err != nil {
		return err
	}
	return d.Sync()
}

// Remove removes the entry name: a file, a symlink or junction (the link,
// never its target) or an empty directory. A missing entry is
// fs.ErrNotExist.
func (d *Dir) Remove(name string) error {
	if err := d.checkName(name); err != nil {
		return err
	}
	if err := d.root.Remove(name); err != nil {
		return d.pathErr("remove", name, underlying(err))
	}
	return nil
}

// RemoveAll removes the entry name and, when it is a directory, everything
// in it, never crossing a symlink or junction (a link is removed as
// itself), nor reaching outside d. A missing entry is no error.
func (d *Dir) RemoveAll(name string) error {
	if err := d.checkName(name); err != nil {
		return err
	}
	fi, err := d.root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return d.pathErr("remove", name, underlying(err))
	}
	if fi.IsDir() && !isReparseInfo(fi) {
		child, err := d.OpenDir(name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case errors.Is(err, ErrSymlink) || errors.Is(err, ErrNotDir):
			// Replaced since the Lstat: remove that as itself.
		case err != nil:
			return err
		default:
			names, err := child.Names()
			var first error
			for _, n := range names {
				if err := child.RemoveAll(n); err != nil && first == nil {
					first = err
				}
			}
			child.Close()
			if err != nil {
				return err
			}
			if first != nil {
				return first
			}
		}
	}
	if err := d.root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return d.pathErr("remove", name, underlying(err))
	}
	return nil
}

// Names lists the directory's entries (without . and ..), unsorted.
func (d *Dir) Names() ([]string, error) {
	f, err := d.root.Open(".")
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.path, Err: underlying(err)}
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// Lstat describes the entry name itself, a link as a link.
func (d *Dir) Lstat(name string) (fs.FileInfo, error) {
	if err := d.checkName(name); err != nil {
		return nil, err
	}
	fi, err := d.root.Lstat(name)
	if err != nil {
		return nil, d.pathErr("lstat", name, underlying(err))
	}
	return fi, nil
}

// Stat describes the directory itself.
func (d *Dir) Stat() (fs.FileInfo, error) {
	fi, err := d.root.Stat(".")
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: d.path, Err: underlying(err)}
	}
	return fi, nil
}

// OpenFile opens the entry name with flag and returns it only when it is
// a regular file: a symlink or junction is ErrSymlink (it is opened as
// itself, never followed), a directory or device ErrNotRegular.
func (d *Dir) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	if err := d.checkName(name); err != nil {
		return nil, err
	}
	f, err := openIn(d.root, name, d.Join(name), flag, perm)
	if err != nil {
		var pe *PathError
		if errors.As(err, &pe) {
			return nil, err
		}
		return nil, d.pathErr("open", name, underlying(err))
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, d.pathErr("stat", name, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &PathError{Path: d.Join(name), Err: ErrNotRegular}
	}
	return f, nil
}

// underlying is the error inside os.Root's *PathError (whose path is
// relative to the root), for one that names the whole path.
func underlying(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
