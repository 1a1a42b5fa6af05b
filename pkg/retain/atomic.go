package retain

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"github.com/retval/retval/internal/fsx"
)

// openStoreFile opens a file of the store through fsx: never through a
// symlink, never blocking on a FIFO, only a regular file. A refusal is
// corrupt, saying what the file is and what to do.
func openStoreFile(path string, flag int, what string) (*os.File, error) {
	f, err := fsx.OpenFile(path, flag, fileMode)
	if fsx.Refused(err) {
		return nil, refusal(err, what)
	}
	return f, err
}

// refusal turns an fsx refusal into a corrupt error naming the file.
func refusal(err error, what string) error {
	var pe *fsx.PathError
	if errors.As(err, &pe) {
		return Errorf(CodeCorrupt, "%s %s %v; run retval verify", what, pe.Path, pe.Err)
	}
	return Errorf(CodeCorrupt, "%s: %v", what, err)
}

// createTemp makes an O_EXCL temporary file in dir whose name marks it as a
// writer's (IsTemp), so gc can tell it from committed files.
func createTemp(dir, pattern string) (*os.File, error) {
	f, err := os.CreateTemp(dir, tmpPrefix+pattern)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(fileMode); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

// WriteFileAtomic writes data to path by way of a synced temporary file in
// the same directory and a rename, then syncs the directory. A reader sees
// the old file or the new one, never a part (golang.org/issue/22397).
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := createTemp(dir, filepath.Base(path)+"-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	return syncDir(dir)
}

// testHookSyncDir, when set, sees every directory syncDir syncs.
var testHookSyncDir func(dir string)

// syncDir fsyncs a directory, making the entries created or renamed in it
// durable (restic's fsyncDir).
func syncDir(dir string) error {
	if testHookSyncDir != nil {
		testHookSyncDir(dir)
	}
	d, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
