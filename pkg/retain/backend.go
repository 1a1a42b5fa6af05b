package retain

import (
	"os"
	"strings"
	"sync"

	"github.com/retval/retval/pkg/retain/internal/backend"
	"github.com/retval/retval/pkg/retain/internal/backend/local"
	"github.com/retval/retval/pkg/retain/internal/backend/object"
	"github.com/retval/retval/pkg/retain/s3store"
)

// chosenBackend is a Store's backend, chosen on first use from Dir.
type chosenBackend struct {
	once sync.Once
	b    backend.Backend
	err  error
}

// backend returns the store's backend, chosen once from its address: an
// s3://BUCKET/PREFIX address is object storage, anything else a runs-dir.
// An s3:// address that could not be opened (no credentials, a bad
// address) is its error, returned by every operation.
func (s *Store) backend() (backend.Backend, error) {
	s.be.once.Do(func() {
		if IsObjectStore(s.Dir) {
			var o *object.Backend
			o, s.be.err = object.Open(s.Dir, s.now)
			if s.be.err == nil {
				s.be.b = o
			}
			return
		}
		s.be.b = local.New(s.Dir, s.now, func() *ValueCache { return s.Cache })
	})
	return s.be.b, s.be.err
}

// RunLock is a writer's shared hold on a run: while it is held, gc (which
// takes the run's lock exclusively, without waiting) leaves the run alone.
type RunLock = backend.RunLock

// LockRun takes run's lock shared, for a writer other than retain (the
// lookup-budget ledger, say). The run must exist. Object storage has no
// run locks (gc holds a lease and marks what it collects): there a run
// that exists is held by nothing.
func (s *Store) LockRun(run ID) (*RunLock, error) {
	b, err := s.backend()
	if err != nil {
		return nil, err
	}
	return b.HoldRun(run, false)
}

// LockRunExclusive takes run's lock exclusively without waiting, as gc
// does before it changes a run: it fails with an ErrBusy error when a
// writer holds the lock. The lock file is created if the run has none.
// On object storage, as LockRun.
func (s *Store) LockRunExclusive(run ID) (*RunLock, error) {
	b, err := s.backend()
	if err != nil {
		return nil, err
	}
	return b.HoldRun(run, true)
}

// ValueCache keeps small values (those read whole and checked against
// their SHA-256) that a long-running reader — retval mcp serve, a Go
// harness — has read, so that the next read of one costs a few lstat
// calls instead of opening, parsing and hashing it again. Values are
// immutable; an entry is used only while its descriptor and its content
// file are the very files it was read from (device, inode, size,
// modification and change times), and only after the run's directory was
// looked up as for any read: a run gc collected, or a file that was
// replaced or written to, is read again from disk, with every check.
// Entries are let go least recently used first once the cache holds more
// than its bytes. It is safe for concurrent use; a nil *ValueCache caches
// nothing, and a zero ValueCache holds DefaultValueCacheBytes. Object
// storage is not cached.
type ValueCache = local.ValueCache

// DefaultValueCacheBytes is the cache retval's MCP server keeps.
const DefaultValueCacheBytes = local.DefaultValueCacheBytes

// NewValueCache returns a cache of at most maxBytes of values
// (DefaultValueCacheBytes when maxBytes is not above 0).
func NewValueCache(maxBytes int64) *ValueCache { return local.NewValueCache(maxBytes) }

// BadLockError is a run whose .lock is not a file retval makes (a
// symlink, a FIFO, a directory): no writer and no gc can lock the run, so
// it is refused as corrupt wherever it is met. It is the Err of an *Error
// with CodeCorrupt.
type BadLockError = local.BadLockError

// WriteFileAtomic writes data to path by way of a synced temporary file in
// the same directory and a rename, then syncs the directory (fsx's
// Dir.WriteFileAtomic). A reader sees the old file or the new one, never a
// part (golang.org/issue/22397); on failure nothing is left behind.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	return local.WriteFileAtomic(path, data, perm)
}

// OpenBucket returns a Store on object storage through a Bucket the
// caller configured itself (its own credentials, HTTP client or part
// size), where Open would read the AWS variables.
func OpenBucket(b *s3store.Bucket) *Store {
	s := &Store{Dir: b.Location().String()}
	s.be.once.Do(func() { s.be.b = object.New(b, s.Dir, s.now) })
	return s
}

// S3Scheme starts a store address that names object storage.
const S3Scheme = "s3://"

// IsObjectStore reports whether dir names object storage (s3://…) rather
// than a local runs-dir.
func IsObjectStore(dir string) bool { return strings.HasPrefix(dir, S3Scheme) }

// LeaseTTL is how long gc's lease on object storage lasts unless renewed;
// gc renews it every third of that while it works.
const LeaseTTL = object.LeaseTTL
