// Package local is the backend of a store in a runs-dir on the local file
// system (see package backend): its guarantees come from O_EXCL temporary
// files, fsync and rename, and flock.
package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/retval/retval/internal/fsx"
	"github.com/retval/retval/pkg/retain/internal/backend"
	"github.com/retval/retval/pkg/retain/internal/format"
)

// Backend is a store in a runs-dir on the local file system: the
// backend of a retain.Store whose address is a path. A run is a
// directory, a value its files in it, each written to a temporary file,
// synced and renamed into place (atomic.go); writers hold the run's lock
// shared, gc exclusively (lock.go).
type Backend struct {
	dir   string // the runs-dir
	now   func() time.Time
	cache func() *ValueCache // the store's cache of small values, or nil
}

// New returns the backend of the runs-dir dir: now is the store's clock,
// cache its cache of small values at the time of each read (nil: none).
// Nothing is touched until an operation asks.
func New(dir string, now func() time.Time, cache func() *ValueCache) *Backend {
	return &Backend{dir: dir, now: now, cache: cache}
}

func (b *Backend) runDir(run format.ID) string { return format.RunDir(b.dir, run) }

func (b *Backend) missingRun(run format.ID) error { return backend.MissingRun(b, b.dir, run) }

func (b *Backend) missingValue(run format.ID, typed string, id format.ID, nearest func() []format.ID) error {
	return backend.MissingValue(b, run, typed, id, nearest)
}

func (b *Backend) rememberCollected(ri *format.RunInfo, at time.Time) error {
	return backend.RememberCollected(b, ri, at)
}

func (b *Backend) Touch(run format.ID) {
	s := b
	p := filepath.Join(s.runDir(run), format.ActivityName)
	now := s.now()
	if fi, err := os.Lstat(p); err == nil && (!fi.Mode().IsRegular() || now.Sub(fi.ModTime()) < format.ActivityEvery && fi.ModTime().Before(now.Add(time.Minute))) {
		return // fresh, or not a file retval writes (verify reports it)
	}
	s.touchNow(p, now)
}

func (b *Backend) Taken(run, id format.ID) bool {
	_, err := os.Lstat(filepath.Join(b.runDir(run), format.MetaName(id)))
	return err == nil
}

func (b *Backend) MustExist(run format.ID) error {
	_, err := b.lookupRun(run)
	return err
}

// TestHookValuesListed, when set (by a test), runs after values has listed the run
// directory and before it reads the descriptors.
var TestHookValuesListed func()

// Values holds the run's lock shared while it reads, so gc cannot
// collect the run half-way through: the answer is the whole run or
// ErrCollected.
func (b *Backend) Values(run format.ID) ([]format.Descriptor, error) {
	l, err := b.lockRun(run, false)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	dir := l.Dir
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	if TestHookValuesListed != nil {
		TestHookValuesListed()
	}
	var out []format.Descriptor
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), format.MetaExt)
		if !ok || !format.IsClean(id) {
			continue
		}
		if d, prob := committedValue(dir, format.ID(id)); prob == nil {
			out = append(out, *d)
		}
	}
	return out, nil
}

func (b *Backend) OpenValue(rid format.ID, run, id string, vid format.ID, touch bool) (*backend.OpenedValue, error) {
	s := b
	dir, err := s.lookupRun(rid)
	if err != nil {
		return nil, format.AsTyped(err, run)
	}
	// gc may rename the run away and delete it between any two of our
	// opens: a file that vanished means "collected" when the run is gone.
	gone := func(err error) error {
		if _, rerr := s.lookupRun(rid); rerr != nil {
			return rerr
		}
		return err
	}
	meta := filepath.Join(dir, format.MetaName(vid))
	if op := s.cache().get(dir, meta); op != nil {
		if touch {
			b.Touch(rid)
		}
		return op, nil
	}
	var metaID fileID
	if s.cache() != nil {
		// Asked before the descriptor is read: a file changed after this
		// has another identity, so no entry pairs it with older bytes.
		metaID, _ = lstatID(meta)
	}
	d, err := readDescriptor(meta)
	if errors.Is(err, fs.ErrNotExist) || err == nil && format.FoldedID(d.ID, vid) {
		return nil, gone(s.missingValue(rid, id, vid, func() []format.ID { return nearestIDs(dir, id) }))
	}
	if err != nil {
		return nil, err
	}
	if d.ID != vid {
		return nil, format.Errorf(format.CodeCorrupt, "descriptor of %q names value %q", vid, d.ID)
	}
	op, err := openContent(dir, d)
	if err != nil {
		return nil, gone(err)
	}
	if metaID != (fileID{}) {
		op.OnWhole = s.cache().pending(meta, metaID, op)
	}
	if touch {
		b.Touch(rid)
	}
	return op, nil
}

func openContent(dir string, d *format.Descriptor) (*backend.OpenedValue, error) {
	if d.Compression != format.CompressNone && d.Compression != format.CompressZstd {
		return nil, format.Errorf(format.CodeCorrupt, "value %q: unsupported compression %q", d.ID, d.Compression)
	}
	p := filepath.Join(dir, format.ContentName(d.ID, d.Compression))
	f, err := openStoreFile(p, os.O_RDONLY, fmt.Sprintf("value %q: content file", d.ID))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, format.Errorf(format.CodeCorrupt, "value %q: content file %s is missing (run retval verify)", d.ID, p)
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() != d.StoredBytes {
		f.Close()
		return nil, format.Errorf(format.CodeCorrupt, "value %q: content file holds %d bytes, descriptor says %d (run retval verify)", d.ID, fi.Size(), d.StoredBytes)
	}
	// Reads check bytes against the descriptor, so the descriptor must
	// describe this file: an empty read is checked by nothing else.
	if d.Size < 0 || d.Compression == format.CompressNone && d.Size != d.StoredBytes || d.Size == 0 && d.SHA256 != format.EmptySHA256 {
		f.Close()
		return nil, format.Errorf(format.CodeCorrupt, "value %q: descriptor says %d bytes (sha256 %.12s…) of a %d-byte content file (run retval verify)", d.ID, d.Size, d.SHA256, fi.Size())
	}
	op := &backend.OpenedValue{Desc: *d, File: f, Raw: f}
	if d.Size > format.IndexMinSize {
		if ix, err := readIndex(filepath.Join(dir, format.LinesName(d.ID)), d); err == nil {
			op.Index = ix
		}
	}
	return op, nil
}

// committedValue is the one rule for "is this a committed value" (SPEC
// §1): id's descriptor in dir reads (within MaxDescriptorSize, never
// through a link) as value id's, with a known compression, and the content
// file it names is a regular file of the size it records. Capacity,
// listing, catalogue, run scans, verify and gc all ask this, so a damaged
// run counts the same everywhere. The SHA-256 is not checked here (that is
// every whole read's and verify's): a committed value is one a reader may
// open, not one proven intact.
//
// The descriptor is returned whenever it parsed, also with a problem (the
// content is missing, say); the problem is nil exactly when the value is
// committed.
func committedValue(dir string, id format.ID) (*format.Descriptor, *format.ValueProblem) {
	d, err := readDescriptor(filepath.Join(dir, format.MetaName(id)))
	if prob := format.Describes(id, d, err); prob != nil {
		return d, prob
	}
	name := format.ContentName(id, d.Compression)
	bad := func(msg string, args ...any) (*format.Descriptor, *format.ValueProblem) {
		return d, &format.ValueProblem{File: name, Kind: format.ProblemCorrupt, Message: fmt.Sprintf(msg, args...)}
	}
	fi, err := os.Lstat(filepath.Join(dir, name))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return d, &format.ValueProblem{File: name, Kind: format.ProblemMissing, Message: fmt.Sprintf("content file missing: %s has no %s", format.MetaName(id), name)}
	case err != nil:
		return bad("cannot open content: %v", err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return bad("content file is a symlink")
	case !fi.Mode().IsRegular():
		return bad("content is not a regular file")
	case fi.Size() != d.StoredBytes:
		return bad("content file holds %d bytes, descriptor says %d", fi.Size(), d.StoredBytes)
	}
	return d, nil
}

// TestHookReadDescriptor, when set, is called on every descriptor read
// (tests count them).
var TestHookReadDescriptor func()

// checkRunDir refuses a run directory that is not a plain directory owned
// by us: a symlink is never followed, and another user's directory is never
// written into or trusted.
func checkRunDir(path string, fi fs.FileInfo) error {
	if fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
		return format.Errorf(format.CodeCorrupt, "%s is not a directory (symlinks are never followed)", path)
	}
	if uid, ok := fsx.Owner(fi); ok && uid != os.Geteuid() {
		return format.Errorf(format.CodeCorrupt, "%s belongs to uid %d, not to us (uid %d): refusing it", path, uid, os.Geteuid())
	}
	return nil
}

// lookupRun checks that run exists, returning its directory, or the
// not-found or collected error a reader should see.
func (s *Backend) lookupRun(run format.ID) (string, error) {
	dir := s.runDir(run)
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", s.missingRun(run)
	}
	if err != nil {
		return "", err
	}
	return dir, checkRunDir(dir, fi)
}

// touchNow sets the modification time of the stamp file p, creating it; it
// never follows a symlink or opens anything but a regular file.
func (s *Backend) touchNow(p string, now time.Time) {
	f, err := fsx.OpenFile(p, os.O_WRONLY|os.O_CREATE, format.FileMode)
	if err != nil {
		return
	}
	defer f.Close()
	fsx.SetTimes(f, now)
}

// nearestIDs returns the value ids of the run directory dir nearest to id.
func nearestIDs(dir, id string) []format.ID {
	want := strings.TrimPrefix(id, "#")
	if len(want) < 2 {
		return nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	names, _ := f.Readdirnames(format.MaxScanned)
	return format.NearestAmong(names, id)
}

// ReadIndex loads and checks the index of a value described by d.
func readIndex(path string, d *format.Descriptor) (*format.Index, error) {
	f, err := openStoreFile(path, os.O_RDONLY, "line index")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > format.MaxIndexSize || fi.Size() < format.IndexHeader+8 {
		return nil, format.ErrBadIndex
	}
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, err
	}
	return format.ParseIndex(b, d)
}

// readDescriptor reads and parses a descriptor without following symlinks,
// blocking on a FIFO, or reading more than MaxDescriptorSize.
func readDescriptor(path string) (*format.Descriptor, error) {
	if TestHookReadDescriptor != nil {
		TestHookReadDescriptor()
	}
	b, err := fsx.ReadSmall(path, format.MaxDescriptorSize)
	if fsx.Refused(err) {
		return nil, refusal(err, "descriptor")
	}
	if err != nil {
		return nil, err
	}
	var d format.Descriptor
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, format.Errorf(format.CodeCorrupt, "descriptor %s: %v", path, err)
	}
	return &d, nil
}
