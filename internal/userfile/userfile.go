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
func Load(p string, max int64) (*File, error) {
	f := &File{Path: p, Shown: p, Mode: 0o600}
	if t, err := filepath.EvalSymlinks(p); err == nil {
		f.Path = t
	}
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

// Replace writes b in place of the file atomically (temporary file, fsync,
// rename, fsync of the directory), creating its directory if needed, after
// keeping what it held as Path+BackupSuffix. It returns the backup's name
// as shown ("" when the file did not exist). A failure leaves the file as
// it was.
func (f *File) Replace(b []byte) (backup string, err error) {
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
		return "", err
	}
	if f.Exists {
		if err := retain.WriteFileAtomic(f.Path+BackupSuffix, f.Old, f.Mode); err != nil {
			return "", fmt.Errorf("writing the backup of %s: %v; nothing changed", f.Shown, err)
		}
		backup = f.Path + BackupSuffix // beside the file itself, a symlink's target
	}
	if err := retain.WriteFileAtomic(f.Path, b, f.Mode); err != nil {
		return "", fmt.Errorf("writing %s: %v; it is unchanged", f.Shown, err)
	}
	return backup, nil
}
