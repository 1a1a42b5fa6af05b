package retain

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/retval/retval/internal/fsx"
)

// openTombstoneDir opens the runs-dir's tombstone directory without
// following a symlink at .retval or at tombstones; with create, the
// directories are made (and their parents synced) where missing.
func (s *localBackend) openTombstoneDir(create bool) (*fsx.Dir, error) {
	root, err := fsx.OpenRoot(s.dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	open := (*fsx.Dir).OpenDir
	if create {
		open = func(d *fsx.Dir, name string) (*fsx.Dir, error) { return d.MkdirOpen(name, dirMode) }
	}
	sd, err := open(root, storeDirName)
	if err != nil {
		return nil, err
	}
	defer sd.Close()
	return open(sd, tombstoneDir)
}

func (be *localBackend) writeTombstone(t Tombstone) error {
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
	return writeAtomicIn(d, string(t.Run)+tombstoneExt, append(b, '\n'), fileMode)
}

func (b *localBackend) readTombstone(run ID) (*Tombstone, bool) {
	s := b
	d, err := s.openTombstoneDir(false)
	if err != nil {
		return nil, false
	}
	defer d.Close()
	t, err := readTombstone(d, string(run)+tombstoneExt)
	if err != nil || t.Run != run {
		return nil, false
	}
	return t, true
}

func (b *localBackend) readTombstoneEntry(name string, max int64) ([]byte, error) {
	s := b
	d, err := s.openTombstoneDir(false)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.ReadFile(name, max)
}

func (be *localBackend) writeTombstoneEntry(name string, b []byte) error {
	s := be
	d, err := s.openTombstoneDir(true)
	if err != nil {
		return err
	}
	defer d.Close()
	return writeAtomicIn(d, name, b, fileMode)
}

func (b *localBackend) removeTombstone(run ID) error {
	s := b
	d, err := s.openTombstoneDir(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Remove(string(run) + tombstoneExt); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (b *localBackend) tombstoneFiles() ([]TombstoneFile, error) {
	s := b
	d, err := s.openTombstoneDir(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if isRefusal(err) {
		return nil, &RefusedError{Path: filepath.Join(storeDirName, tombstoneDir), Err: err}
	}
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Names()
	if err != nil {
		return nil, err
	}
	out := make([]TombstoneFile, 0, len(names))
	for _, name := range names {
		f := TombstoneFile{Name: name, Path: filepath.Join(storeDirName, tombstoneDir, name), Temp: isTemp(name)}
		f.Bytes, err = d.TreeSize(name)
		if err != nil {
			return nil, err
		}
		switch {
		case f.Temp:
		case isCollectedIDsName(name):
			var b []byte
			if b, f.Problem = d.ReadFile(name, MaxCollectedIDsBytes); f.Problem == nil {
				f.IDs, f.Problem = parseCollectedIDs(name, b)
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

func (b *localBackend) removeTombstoneFile(name string) error {
	s := b
	if strings.ContainsRune(name, '/') {
		return Errorf(CodeIO, "tombstone entry %q: not a name", name)
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

func readTombstone(d *fsx.Dir, name string) (*Tombstone, error) {
	b, err := d.ReadFile(name, MaxTombstoneBytes)
	if err != nil {
		return nil, err
	}
	var t Tombstone
	if json.Unmarshal(b, &t) != nil || !IsClean(string(t.Run)) || name != string(t.Run)+tombstoneExt {
		return nil, &fsx.PathError{Path: d.Join(name), Err: errNotTombstone}
	}
	return &t, nil
}
