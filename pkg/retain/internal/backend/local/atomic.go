package local

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"

	"github.com/retval/retval/internal/fsx"
	"github.com/retval/retval/pkg/retain/internal/format"
)

// openStoreFile opens a file of the store through fsx: never through a
// symlink, never blocking on a FIFO, only a regular file. A refusal is
// corrupt, saying what the file is and what to do.
func openStoreFile(path string, flag int, what string) (*os.File, error) {
	f, err := fsx.OpenFile(path, flag, format.FileMode)
	if fsx.Refused(err) {
		return nil, refusal(err, what)
	}
	return f, err
}

// refusal turns an fsx refusal into a corrupt error naming the file.
func refusal(err error, what string) error {
	var pe *fsx.PathError
	if errors.As(err, &pe) {
		return format.Errorf(format.CodeCorrupt, "%s %s %v; run retval verify", what, pe.Path, pe.Err)
	}
	return format.Errorf(format.CodeCorrupt, "%s: %v", what, err)
}

// WriteFileAtomic writes data to path by way of a synced temporary file in
// the same directory and a rename, then syncs the directory (fsx's
// Dir.WriteFileAtomic). A reader sees the old file or the new one, never a
// part (golang.org/issue/22397); on failure nothing is left behind.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	d, err := fsx.OpenRoot(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return writeAtomicIn(d, filepath.Base(path), data, perm)
}

// writeAtomicIn writes data to the entry name of d by way of a temporary
// entry that marks it as a writer's (isTemp).
func writeAtomicIn(d *fsx.Dir, name string, data []byte, perm os.FileMode) error {
	var r [8]byte
	if _, err := rand.Read(r[:]); err != nil {
		return err
	}
	return d.WriteFileAtomic(name, format.TmpPrefix+name+"-"+hex.EncodeToString(r[:]), data, perm)
}

// syncDir fsyncs a directory, making the entries created or renamed in it
// durable (restic's fsyncDir).
func syncDir(dir string) error {
	d, err := fsx.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
