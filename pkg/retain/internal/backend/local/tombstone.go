package local

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/retval/retval/internal/fsx"
	"github.com/retval/retval/pkg/retain/internal/format"
)

// openTombstoneDir opens the runs-dir's tombstone directory without
// following a symlink at .retval or at tombstones; with create, the
// directories are made (and their parents synced) where missing.
func (s *Backend) openTombstoneDir(create bool) (*fsx.Dir, error) {
	root, err := fsx.OpenRoot(s.dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	open := (*fsx.Dir).OpenDir
	if create {
		open = func(d *fsx.Dir, name string) (*fsx.Dir, error) { return d.MkdirOpen(name, format.DirMode) }
	}
	sd, err := open(root, format.StoreDirName)
	if err != nil {
		return nil, err
	}
	defer sd.Close()
	return open(sd, format.TombstoneDir)
}

func (be *Backend) WriteTombstone(t format.Tombstone) error {
	s := be
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	d, err := s.openTombstoneDir(true)
	if err != nil {
		return err
	}
	defer d.Close()
	return writeAtomicIn(d, string(t.Run)+format.TombstoneExt, append(b, '\n'), format.FileMode)
}

func (b *Backend) ReadTombstone(run format.ID) (*format.Tombstone, bool) {
	s := b
	d, err := s.openTombstoneDir(false)
	if err != nil {
		return nil, false
	}
	defer d.Close()
	t, err := readTombstone(d, string(run)+format.TombstoneExt)
	if err != nil || t.Run != run {
		return nil, false
	}
	return t, true
}

func (b *Backend) ReadTombstoneEntry(name string, max int64) ([]byte, error) {
	s := b
	d, err := s.openTombstoneDir(false)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.ReadFile(name, max)
}

func (be *Backend) WriteTombstoneEntry(name string, b []byte) error {
	s := be
	d, err := s.openTombstoneDir(true)
	if err != nil {
		return err
	}
	defer d.Close()
	return writeAtomicIn(d, name, b, format.FileMode)
}

func (b *Backend) RemoveTombstone(run format.ID) error {
	s := b
	d, err := s.openTombstoneDir(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Remove(string(run) + format.TombstoneExt); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (b *Backend) TombstoneFiles() ([]format.TombstoneFile, error) {
	s := b
	d, err := s.openTombstoneDir(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if format.IsRefusal(err) {
		return nil, &format.RefusedError{Path: filepath.Join(format.StoreDirName, format.TombstoneDir), Err: err}
	}
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Names()
	if err != nil {
		return nil, err
	}
	out := make([]format.TombstoneFile, 0, len(names))
	for _, name := range names {
		f := format.TombstoneFile{Name: name, Path: filepath.Join(format.StoreDirName, format.TombstoneDir, name), Temp: format.IsTemp(name)}
		f.Bytes, err = d.TreeSize(name)
		if err != nil {
			return nil, err
		}
		switch {
		case f.Temp:
		case format.IsCollectedIDsName(name):
			var b []byte
			if b, f.Problem = d.ReadFile(name, format.MaxCollectedIDsBytes); f.Problem == nil {
				f.IDs, f.Problem = format.ParseCollectedIDs(name, b)
			}
		default:
			f.Tombstone, f.Problem = readTombstone(d, name)
		}
		if errors.Is(f.Problem, fs.ErrNotExist) {
			continue // removed while we listed
		}
		out = append(out, f)
	}
	return out, nil
}

func (b *Backend) RemoveTombstoneFile(name string) error {
	s := b
	if strings.ContainsRune(name, '/') {
		return format.Errorf(format.CodeIO, "tombstone entry %q: not a name", name)
	}
	d, err := s.openTombstoneDir(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer d.Close()
	return d.RemoveAll(name)
}

func readTombstone(d *fsx.Dir, name string) (*format.Tombstone, error) {
	b, err := d.ReadFile(name, format.MaxTombstoneBytes)
	if err != nil {
		return nil, err
	}
	var t format.Tombstone
	if json.Unmarshal(b, &t) != nil || !format.IsClean(string(t.Run)) || name != string(t.Run)+format.TombstoneExt {
		return nil, &fsx.PathError{Path: d.Join(name), Err: format.ErrNotTombstone}
	}
	return &t, nil
}
