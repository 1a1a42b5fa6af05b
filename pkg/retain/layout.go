package retain

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// The on-disk names of SPEC §1, unexported: every other package works on
// the store through operations (Retain, Values, ScanRun, Collection,
// OpenStepLedger, ...), never by building a path.
const (
	runSuffix     = ".values"
	contentExt    = ".txt"
	zstdExt       = ".txt.zst"
	metaExt       = ".meta.json"
	linesExt      = ".lines"
	lockName      = ".lock"
	activityName  = ".activity"
	stepsDirName  = ".steps"
	storeDirName  = ".retval"
	tombstoneDir  = "tombstones"
	tmpPrefix     = ".tmp-"
	dirMode       = 0o700
	fileMode      = 0o600
	activityEvery = time.Hour
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

// Open returns a Store for dir (a runs-dir, or s3://BUCKET/PREFIX);
// nothing is created or sent until something is written or read.
func Open(dir string) *Store { return &Store{Dir: dir} }

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

// runDir is the directory of run in the runs-dir dir.
func runDir(dir string, run ID) string { return filepath.Join(dir, string(run)+runSuffix) }

// runFromDirName returns the run id of a directory entry of the runs-dir, or
// false when the entry is not a run directory.
func runFromDirName(name string) (ID, bool) {
	r, ok := strings.CutSuffix(name, runSuffix)
	if !ok || !IsClean(r) {
		return "", false
	}
	return ID(r), true
}

// contentName is the file name of a value's bytes.
func contentName(id ID, c Compression) string {
	if c == CompressZstd {
		return string(id) + zstdExt
	}
	return string(id) + contentExt
}

// metaName is the file name of a value's descriptor.
func metaName(id ID) string { return string(id) + metaExt }

// linesName is the file name of a value's line and block index.
func linesName(id ID) string { return string(id) + linesExt }

// isTemp reports whether a file name is a writer's temporary file.
func isTemp(name string) bool { return strings.HasPrefix(name, tmpPrefix) }

// valueOf tells which value a run directory entry belongs to, if any:
// content, descriptor or index of id.
func valueOf(name string) (ID, bool) {
	for _, ext := range []string{metaExt, zstdExt, contentExt, linesExt} {
		if r, ok := strings.CutSuffix(name, ext); ok && IsClean(r) {
			return ID(r), true
		}
	}
	return "", false
}

// Touch records read activity on run, at most once per hour, so gc sees a
// run in use as not idle. Failures are ignored: a read-only store still reads.
func (s *Store) Touch(run ID) {
	if b, err := s.backend(); err == nil {
		b.touch(run)
	}
}

// tombstones is what the rules about collected runs read and write: a
// backend's tombstones, and gc's other records beside them.
type tombstones interface {
	readTombstone(run ID) (*Tombstone, bool)
	readTombstoneEntry(name string, max int64) ([]byte, error)
	writeTombstoneEntry(name string, b []byte) error
}

// missingRun is the error for a run that is not there in the store at
// dir: collected, when gc left a tombstone, or unknown.
func missingRun(t tombstones, dir string, run ID) error {
	if t, ok := t.readTombstone(run); ok {
		return collectedError(t)
	}
	return &Error{Code: CodeUnknownReference, Err: &UnknownRunError{Run: run, Dir: dir}}
}

// collectedError is the error of a lookup in the run t says gc collected.
func collectedError(t *Tombstone) error {
	return &Error{Code: CodeCollected, Err: fmt.Errorf("run %q was collected by gc at %s", t.Run, t.Collected.UTC().Format(time.RFC3339))}
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

// UnknownRunError is the error of a run the store does not hold. It is
// the Err of an *Error with CodeUnknownReference.
type UnknownRunError struct {
	Run ID
	Dir string // the runs-dir looked in
	// Typed is the run id as given, when it is not Run itself (an id the
	// sanitizer changed, such as "../x"): the message names both.
	Typed string
}

func (e *UnknownRunError) Error() string {
	if e.Typed != "" && e.Typed != string(e.Run) {
		return fmt.Sprintf("no run %q (stored as %q) in %s", e.Typed, e.Run, e.Dir)
	}
	return fmt.Sprintf("no run %q in %s", e.Run, e.Dir)
}

// asTyped makes an unknown run's error name the run as it was given.
func asTyped(err error, typed string) error {
	var ur *UnknownRunError
	if !errors.As(err, &ur) || typed == string(ur.Run) {
		return err
	}
	named := *ur
	named.Typed = typed
	return &Error{Code: CodeOf(err), Err: &named}
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
	return err == nil && b.taken(rid, id)
}
