package retain

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/retval/retval/internal/fsx"
)

// Tombstone is what gc leaves of a collected run.
type Tombstone struct {
	Run       ID        `json:"run"`
	Collected time.Time `json:"collected"`
	Values    int       `json:"values"`
	Bytes     int64     `json:"bytes"`
}

// MaxTombstoneBytes bounds what is read of a tombstone: gc writes about a
// hundred bytes, so anything larger is not one (a link to /dev/zero, say)
// and is never read whole.
const MaxTombstoneBytes = 64 << 10

const tombstoneExt = ".json"

// tombstoneDirPath is where tombstones live.
func (s *Store) tombstoneDirPath() string { return filepath.Join(s.Dir, storeDirName, tombstoneDir) }

// openTombstoneDir opens the runs-dir's tombstone directory without
// following a symlink at .retval or at tombstones; with create, the
// directories are made (and their parents synced) where missing.
func (s *Store) openTombstoneDir(create bool) (*fsx.Dir, error) {
	root, err := fsx.OpenRoot(s.Dir)
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

// WriteTombstone records, durably, that run was collected: the file is
// written and synced under a temporary name, renamed, and its directory
// synced. A symlink in place of .retval or .retval/tombstones is refused
// (an *fsx.PathError), never written through.
func (s *Store) WriteTombstone(t Tombstone) error {
	if o, ok, err := s.objBackend(); ok {
		return orErr(err, func() error { return o.writeTombstone(t) })
	}
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

// ReadTombstone returns the tombstone of run, if gc left one. It never
// follows a symlink (at .retval, at tombstones or at the file), never
// opens anything but a regular file, and reads at most MaxTombstoneBytes:
// anything else, or a file that is not a tombstone of run, counts as no
// tombstone.
func (s *Store) ReadTombstone(run ID) (*Tombstone, bool) {
	if o, err := s.object(); err != nil || o != nil {
		if o == nil {
			return nil, false
		}
		return o.readTombstone(run)
	}
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

// readTombstoneEntry reads the entry name of the tombstone directory, at
// most max bytes, never following a symlink or opening anything but a
// regular file (object.go: the key). No entry is an error that
// errors.Is fs.ErrNotExist.
func (s *Store) readTombstoneEntry(name string, max int64) ([]byte, error) {
	if o, ok, err := s.objBackend(); ok {
		if err != nil {
			return nil, err
		}
		return o.readTombstoneEntry(name, max)
	}
	d, err := s.openTombstoneDir(false)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.ReadFile(name, max)
}

// writeTombstoneEntry writes b as the entry name of the tombstone
// directory, durably and whole (synced under a temporary name, renamed,
// its directory synced), making the directory where missing. Only gc
// writes there.
func (s *Store) writeTombstoneEntry(name string, b []byte) error {
	if o, ok, err := s.objBackend(); ok {
		return orErr(err, func() error { return o.writeTombstoneEntry(name, b) })
	}
	d, err := s.openTombstoneDir(true)
	if err != nil {
		return err
	}
	defer d.Close()
	return writeAtomicIn(d, name, b, fileMode)
}

// errNotTombstone says a file in the tombstone directory does not hold
// one.
var errNotTombstone = errors.New("is not a tombstone")

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

// RemoveTombstone forgets a tombstone (a new run of that name was written,
// or the tombstone expired). It removes the entry itself, never what a
// symlink there points at. No tombstone is no error.
func (s *Store) RemoveTombstone(run ID) error {
	if o, ok, err := s.objBackend(); ok {
		return orErr(err, func() error { return o.removeTombstone(run) })
	}
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

// TombstoneFile is an entry of the tombstone directory as gc sees it.
type TombstoneFile struct {
	Name  string
	Path  string // relative to the runs-dir
	Bytes int64  // apparent size (of the whole tree, for a directory)
	// Temp: a writer's temporary file. Only gc writes tombstones, under
	// its lock, so one found by a gc holding the lock is debris.
	Temp bool
	// Tombstone is nil when the entry is not a readable tombstone: a
	// symlink, a FIFO, a directory, larger than MaxTombstoneBytes, or not
	// a tombstone's JSON under its run's name.
	Tombstone *Tombstone
	// IDs is the entry when it is a run's collected-ids record
	// (<run>.ids.json, read within MaxCollectedIDsBytes), in place of a
	// tombstone.
	IDs *CollectedIDs
	// Problem says why neither Tombstone nor IDs is set.
	Problem error
}

// TombstoneFiles lists the tombstone directory, reading each tombstone
// within its bound. No directory (no gc collected anything yet) is an
// empty list; a symlink in place of .retval or of the directory is a
// *RefusedError (wrapping an *fsx.PathError), and nothing behind it is
// read.
func (s *Store) TombstoneFiles() ([]TombstoneFile, error) {
	if o, ok, err := s.objBackend(); ok {
		if err != nil {
			return nil, err
		}
		return o.tombstoneFiles()
	}
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

// RemoveTombstoneFile removes the entry name of the tombstone directory
// (a file, a link, or a directory and everything in it) without following
// any symlink. A missing entry is no error.
func (s *Store) RemoveTombstoneFile(name string) error {
	if o, ok, err := s.objBackend(); ok {
		return orErr(err, func() error { return o.removeTombstoneFile(name) })
	}
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
