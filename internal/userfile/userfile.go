// Package userfile edits a file the user owns outside the store (a
// harness's settings or config file): read through a bound, written back
// atomically after a backup of what it held, and edited where a symlink
// points so that the link stays a link.
package userfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/retval/retval/internal/fsx"
	"github.com/retval/retval/pkg/retain"
)

// BackupSuffix names the copy of a file as it was before retval changed it.
const BackupSuffix = ".retval.bak"

// File is a file being edited.
type File struct {
	Path   string // where it is read and written (a symlink's target)
	Shown  string // as the user named it
	Old    []byte // what it held; nil when it does not exist
	Exists bool
	Mode   fs.FileMode
}

// Load reads the file named p, at most max bytes, through a symlink to
// its target. A file that does not exist is not an error: Exists is false.
// A symlink whose target does not exist yet (a dotfile manager's link,
// made before the file) is a file that does not exist at the target:
// Replace creates it there and the link stays a link; when the target's
// directory does not exist either, Load refuses.
func Load(p string, max int64) (*File, error) {
	t, err := target(p)
	if err != nil {
		return nil, err
	}
	f := &File{Path: t, Shown: p, Mode: 0o600}
	b, err := fsx.ReadUserFile(f.Path, max)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return f, nil
	case err != nil:
		return nil, fmt.Errorf("reading %s: %v", p, err)
	}
	f.Old, f.Exists = b, true
	if fi, err := os.Stat(f.Path); err == nil {
		f.Mode = fi.Mode().Perm()
	}
	return f, nil
}

// target is where the file named p is: p itself, or for a symlink the
// file it points at in the end, also one that does not exist yet.
func target(p string) (string, error) {
	if t, err := filepath.EvalSymlinks(p); err == nil {
		return t, nil
	}
	cur := p
	for range 40 {
		fi, err := os.Lstat(cur)
		switch {
		case errors.Is(err, fs.ErrNotExist) && cur == p:
			return p, nil
		case errors.Is(err, fs.ErrNotExist):
			dir := filepath.Dir(cur)
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				return "", fmt.Errorf("%s is a symlink to %s, whose directory does not exist: create %s (or remove the link), then run this again", p, cur, dir)
			}
			return cur, nil
		case err != nil:
			return "", err
		case fi.Mode()&fs.ModeSymlink == 0:
			return cur, nil
		}
		l, err := os.Readlink(cur)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(l) {
			l = filepath.Join(filepath.Dir(cur), l)
		}
		cur = l
	}
	return "", fmt.Errorf("%s: too many levels of symlinks", p)
}

// Replace writes b in place of the file atomically (temporary file, fsync,
// rename, fsync of the directory), creating its directory if needed, after
// keeping what it held as Path+BackupSuffix. It returns the backup's name
// as shown ("" when the file did not exist). A failure leaves the file as
// it was.
func (f *File) Replace(b []byte) (backup string, err error) {
	if f.Exists {
		if err := retain.WriteFileAtomic(f.Path+BackupSuffix, f.Old, f.Mode); err != nil {
			return "", fmt.Errorf("writing the backup of %s: %v; nothing changed", f.Shown, err)
		}
		backup = f.Path + BackupSuffix // beside the file itself, a symlink's target
	}
	return backup, f.Write(b)
}

// Write writes b in place of the file atomically, as Replace does, but
// keeps no backup.
func (f *File) Write(b []byte) error {
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
		return err
	}
	if err := retain.WriteFileAtomic(f.Path, b, f.Mode); err != nil {
		return fmt.Errorf("writing %s: %v; it is unchanged", f.Shown, err)
	}
	return nil
}

// MissingDirs are the directories writing the file would make: its
// directory and those above it that do not exist, outermost first.
func (f *File) MissingDirs() []string {
	var missing []string
	for d := filepath.Dir(f.Path); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || filepath.Dir(d) == d {
			break
		}
		missing = append([]string{d}, missing...)
	}
	return missing
}

// Remove deletes the file (a symlink's target; the link stays, as it was
// before the file was made), then those of dirs that are left empty,
// innermost first: what writing a file that did not exist made for it
// (MissingDirs).
func (f *File) Remove(dirs []string) error {
	if err := os.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing %s: %v", f.Shown, err)
	}
	RemoveEmptyDirs(dirs)
	return nil
}

// RemoveEmptyDirs removes those of dirs that are empty, innermost (last)
// first; a directory that holds anything stays.
func RemoveEmptyDirs(dirs []string) {
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Remove(dirs[i]) // fails, harmlessly, when not empty
	}
}
