package fsx

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotDir is the error for an entry that is a file, a FIFO or a device
// where a directory belongs.
var ErrNotDir = errors.New("is not a directory")

// Path is the directory's path, as it was opened (for messages).
func (d *Dir) Path() string { return d.path }

// Join is the path of an entry, for messages.
func (d *Dir) Join(name string) string { return filepath.Join(d.path, name) }

// checkName refuses anything but one path element: no entry operation
// may reach outside its directory. (separators is "/" on Unix; Windows
// adds "\\" and ":", which would name an alternate data stream.)
func (d *Dir) checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, separators) {
		return &fs.PathError{Op: "open", Path: d.Join(name), Err: fs.ErrInvalid}
	}
	return nil
}

func (d *Dir) pathErr(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: d.Join(name), Err: err}
}

// TestHookSync, when set, sees the path of every directory Sync syncs: a
// test's way to check that what must be durable is synced.
var TestHookSync func(dir string)

// ReadFile reads the regular file name whole, refusing one larger than max
// bytes, a symlink and anything that is not a regular file.
func (d *Dir) ReadFile(name string, max int64) ([]byte, error) {
	f, err := d.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, f.Name(), max)
}

// WriteFileAtomic writes data to the entry name by way of the temporary
// entry tmp (created exclusively, so it must not exist): write, fsync,
// rename over name, fsync d. A reader sees the old file or the new one,
// never a part; on failure tmp is removed and name is unchanged.
func (d *Dir) WriteFileAtomic(name, tmp string, data []byte, perm fs.FileMode) error {
	f, err := d.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			d.Remove(tmp)
		}
	}()
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := SyncFile(f); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := d.Rename(tmp, d, name); err != nil {
		return err
	}
	ok = true
	return nil
}

// TreeSize is the apparent size of the entry name and, for a directory,
// of everything under it, as du -sb counts it; it never follows a symlink
// (a link counts as itself). Entries that vanish meanwhile count nothing.
func (d *Dir) TreeSize(name string) (int64, error) {
	fi, err := d.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := fi.Size()
	if !fi.IsDir() {
		return n, nil
	}
	child, err := d.OpenDir(name)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrSymlink) || errors.Is(err, ErrNotDir) {
		return n, nil // changed since the Lstat
	}
	if err != nil {
		return n, err
	}
	defer child.Close()
	names, err := child.Names()
	if err != nil {
		return n, err
	}
	for _, c := range names {
		m, err := child.TreeSize(c)
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
