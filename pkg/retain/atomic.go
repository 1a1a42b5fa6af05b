package retain

import (
	"os"
	"path/filepath"
)

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

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
