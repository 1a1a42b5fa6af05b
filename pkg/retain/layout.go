package retain

import (
	"errors"
	"time"
)

// Store is a runs-dir, or a store on S3-compatible object storage when
// Dir is an s3://BUCKET/PREFIX address (credentials, region and endpoint
// from the standard AWS variables). The zero Now means time.Now.
type Store struct {
	Dir string
	Now func() time.Time
	// OnLogError, when set, is told of each failure to append to a run's
	// read log (the read itself goes on). The CLI says the first on stderr.
	OnLogError func(error)
	// Cache, when set, keeps the small values read through this Store
	// for the next read of them (a long-running reader: see ValueCache).
	Cache *ValueCache

	be chosenBackend // the storage it lives on (backend.go)
}

// Open returns a Store for dir (a runs-dir, or s3://BUCKET/PREFIX), its
// backend chosen from dir once, here (a Store made as a literal chooses
// it on first use); nothing is created or sent until something is
// written or read.
func Open(dir string) *Store {
	s := &Store{Dir: dir}
	s.backend()
	return s
}

// Clock is the store's clock: Now, or time.Now when Now is nil. Every
// package that judges ages in a store (gc, stats, catalogue) reads it, so a
// test or a harness sets one clock for all of them.
func (s *Store) Clock() time.Time { return s.now() }

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// RunDir is the directory of a run (in a runs-dir; on object storage,
// the run's prefix as a path).
func (s *Store) RunDir(run ID) string { return runDir(s.Dir, run) }

// Touch records read activity on run, at most once per hour, so gc sees a
// run in use as not idle. Failures are ignored: a read-only store still reads.
func (s *Store) Touch(run ID) {
	if b, err := s.backend(); err == nil {
		b.Touch(run)
	}
}

// keepCollected is err when it says the value's run was collected while
// the value was read (on object storage gc deletes a run's objects under
// an open reader), else corrupt: a read that failed because gc won a
// race is not a damaged value.
func keepCollected(err, corrupt error) error {
	if errors.Is(err, ErrCollected) {
		return err
	}
	return corrupt
}

// Taken reports whether call (a call id, or the value id made from it)
// names a descriptor in run: an id that Retain would not treat as new. A
// run that does not exist takes nothing.
func (s *Store) Taken(run, call string) bool {
	rid, err := Sanitize(run)
	if err != nil {
		return false
	}
	id, err := Sanitize(call)
	if err != nil {
		return false
	}
	b, err := s.backend()
	return err == nil && b.Taken(rid, id)
}
