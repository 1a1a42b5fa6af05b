package retain

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// localBackend is a store in a runs-dir on the local file system: the
// backend of a Store whose address is a path (backend.go). A run is a
// directory, a value its files in it, each written to a temporary file,
// synced and renamed into place; writers hold the run's lock shared, gc
// exclusively (lock.go). Its files are local*.go, lock.go and atomic.go.
type localBackend struct {
	s *Store
}

func (b *localBackend) touch(run ID) {
	s := b.s
	p := filepath.Join(s.RunDir(run), activityName)
	now := s.now()
	if fi, err := os.Lstat(p); err == nil && (!fi.Mode().IsRegular() || now.Sub(fi.ModTime()) < activityEvery && fi.ModTime().Before(now.Add(time.Minute))) {
		return // fresh, or not a file retval writes (verify reports it)
	}
	s.touchNow(p, now)
}

func (b *localBackend) taken(run, id ID) bool {
	_, err := os.Lstat(filepath.Join(b.s.RunDir(run), metaName(id)))
	return err == nil
}

func (b *localBackend) mustExist(run ID) error {
	_, err := b.s.lookupRun(run)
	return err
}

// testHookValuesListed, when set, runs after values has listed the run
// directory and before it reads the descriptors.
var testHookValuesListed func()

// values holds the run's lock shared while it reads, so gc cannot
// collect the run half-way through: the answer is the whole run or
// ErrCollected.
func (b *localBackend) values(run ID) ([]Descriptor, error) {
	l, err := b.s.lockRun(run, false)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	dir := l.Dir
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	if testHookValuesListed != nil {
		testHookValuesListed()
	}
	var out []Descriptor
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), metaExt)
		if !ok || !IsClean(id) {
			continue
		}
		if d, prob := committedValue(dir, ID(id)); prob == nil {
			out = append(out, *d)
		}
	}
	return out, nil
}

func (b *localBackend) openValue(rid ID, run, id string, vid ID, touch bool) (*Value, error) {
	s := b.s
	dir, err := s.lookupRun(rid)
	if err != nil {
		return nil, asTyped(err, run)
	}
	// gc may rename the run away and delete it between any two of our
	// opens: a file that vanished means "collected" when the run is gone.
	gone := func(err error) error {
		if _, rerr := s.lookupRun(rid); rerr != nil {
			return rerr
		}
		return err
	}
	meta := filepath.Join(dir, metaName(vid))
	if v := s.Cache.get(dir, meta); v != nil {
		v.Run = rid
		if touch {
			s.Touch(rid)
		}
		return v, nil
	}
	var metaID fileID
	if s.Cache != nil {
		// Asked before the descriptor is read: a file changed after this
		// has another identity, so no entry pairs it with older bytes.
		metaID, _ = lstatID(meta)
	}
	d, err := readDescriptor(meta)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, gone(s.missingValue(rid, id, vid, func() []ID { return nearestIDs(dir, id) }))
	}
	if err != nil {
		return nil, err
	}
	if d.ID != vid {
		return nil, Errorf(CodeCorrupt, "descriptor of %q names value %q", vid, d.ID)
	}
	v, err := openContent(dir, d)
	if err != nil {
		return nil, gone(err)
	}
	if metaID != (fileID{}) {
		v.cache = s.Cache.pending(meta, metaID, v)
	}
	v.Run = rid
	if touch {
		s.Touch(rid)
	}
	return v, nil
}
