package retain

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/retval/retval/internal/fsx"
	"golang.org/x/sys/unix"
)

// localBackend is a store in a runs-dir on the local file system: the
// backend of a Store whose address is a path (backend.go). A run is a
// directory, a value its files in it, each written to a temporary file,
// synced and renamed into place; writers hold the run's lock shared, gc
// exclusively (lock.go). Its files are local*.go, lock.go and atomic.go.
type localBackend struct {
	dir   string // the runs-dir
	now   func() time.Time
	cache func() *ValueCache // the store's cache of small values, or nil
}

func (b *localBackend) runDir(run ID) string { return runDir(b.dir, run) }

func (b *localBackend) missingRun(run ID) error { return missingRun(b, b.dir, run) }

func (b *localBackend) missingValue(run ID, typed string, id ID, nearest func() []ID) error {
	return missingValue(b, run, typed, id, nearest)
}

func (b *localBackend) rememberCollected(ri *RunInfo, at time.Time) error {
	return rememberCollected(b, ri, at)
}

func (b *localBackend) touch(run ID) {
	s := b
	p := filepath.Join(s.runDir(run), activityName)
	now := s.now()
	if fi, err := os.Lstat(p); err == nil && (!fi.Mode().IsRegular() || now.Sub(fi.ModTime()) < activityEvery && fi.ModTime().Before(now.Add(time.Minute))) {
		return // fresh, or not a file retval writes (verify reports it)
	}
	s.touchNow(p, now)
}

func (b *localBackend) taken(run, id ID) bool {
	_, err := os.Lstat(filepath.Join(b.runDir(run), metaName(id)))
	return err == nil
}

func (b *localBackend) mustExist(run ID) error {
	_, err := b.lookupRun(run)
	return err
}

// testHookValuesListed, when set, runs after values has listed the run
// directory and before it reads the descriptors.
var testHookValuesListed func()

// values holds the run's lock shared while it reads, so gc cannot
// collect the run half-way through: the answer is the whole run or
// ErrCollected.
func (b *localBackend) values(run ID) ([]Descriptor, error) {
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

func (b *localBackend) openValue(rid ID, run, id string, vid ID, touch bool) (*openedValue, error) {
	s := b
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
	if op := s.cache().get(dir, meta); op != nil {
		if touch {
			b.touch(rid)
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
	if errors.Is(err, fs.ErrNotExist) {
		return nil, gone(s.missingValue(rid, id, vid, func() []ID { return nearestIDs(dir, id) }))
	}
	if err != nil {
		return nil, err
	}
	if d.ID != vid {
		return nil, Errorf(CodeCorrupt, "descriptor of %q names value %q", vid, d.ID)
	}
	op, err := openContent(dir, d)
	if err != nil {
		return nil, gone(err)
	}
	if metaID != (fileID{}) {
		op.onWhole = s.cache().pending(meta, metaID, op)
	}
	if touch {
		b.touch(rid)
	}
	return op, nil
}

func openContent(dir string, d *Descriptor) (*openedValue, error) {
	if d.Compression != CompressNone && d.Compression != CompressZstd {
		return nil, Errorf(CodeCorrupt, "value %q: unsupported compression %q", d.ID, d.Compression)
	}
	p := filepath.Join(dir, contentName(d.ID, d.Compression))
	f, err := openStoreFile(p, os.O_RDONLY, fmt.Sprintf("value %q: content file", d.ID))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, Errorf(CodeCorrupt, "value %q: content file %s is missing (run retval verify)", d.ID, p)
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
		return nil, Errorf(CodeCorrupt, "value %q: content file holds %d bytes, descriptor says %d (run retval verify)", d.ID, fi.Size(), d.StoredBytes)
	}
	// Reads check bytes against the descriptor, so the descriptor must
	// describe this file: an empty read is checked by nothing else.
	if d.Size < 0 || d.Compression == CompressNone && d.Size != d.StoredBytes || d.Size == 0 && d.SHA256 != emptySHA256 {
		f.Close()
		return nil, Errorf(CodeCorrupt, "value %q: descriptor says %d bytes (sha256 %.12s…) of a %d-byte content file (run retval verify)", d.ID, d.Size, d.SHA256, fi.Size())
	}
	op := &openedValue{desc: *d, f: f, raw: f}
	if d.Size > IndexMinSize {
		if ix, err := readIndex(filepath.Join(dir, linesName(d.ID)), d); err == nil {
			op.index = ix
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
func committedValue(dir string, id ID) (*Descriptor, *valueProblem) {
	d, err := readDescriptor(filepath.Join(dir, metaName(id)))
	if prob := describes(id, d, err); prob != nil {
		return d, prob
	}
	name := contentName(id, d.Compression)
	bad := func(format string, args ...any) (*Descriptor, *valueProblem) {
		return d, &valueProblem{File: name, Kind: ProblemCorrupt, Message: fmt.Sprintf(format, args...)}
	}
	fi, err := os.Lstat(filepath.Join(dir, name))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return d, &valueProblem{File: name, Kind: ProblemMissing, Message: fmt.Sprintf("content file missing: %s has no %s", metaName(id), name)}
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

// checkRunDir refuses a run directory that is not a plain directory owned
// by us: a symlink is never followed, and another user's directory is never
// written into or trusted.
func checkRunDir(path string, fi fs.FileInfo) error {
	if fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
		return Errorf(CodeCorrupt, "%s is not a directory (symlinks are never followed)", path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return Errorf(CodeCorrupt, "%s belongs to uid %d, not to us (uid %d): refusing it", path, st.Uid, os.Geteuid())
	}
	return nil
}

// lookupRun checks that run exists, returning its directory, or the
// not-found or collected error a reader should see.
func (s *localBackend) lookupRun(run ID) (string, error) {
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
func (s *localBackend) touchNow(p string, now time.Time) {
	f, err := fsx.OpenFile(p, os.O_WRONLY|os.O_CREATE, fileMode)
	if err != nil {
		return
	}
	defer f.Close()
	tv := unix.NsecToTimeval(now.UnixNano())
	unix.Futimes(int(f.Fd()), []unix.Timeval{tv, tv})
}

// nearestIDs returns the value ids of the run directory dir nearest to id.
func nearestIDs(dir, id string) []ID {
	want := strings.TrimPrefix(id, "#")
	if len(want) < 2 {
		return nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	names, _ := f.Readdirnames(maxScanned)
	return nearestAmong(names, id)
}

// readIndex loads and checks the index of a value described by d.
func readIndex(path string, d *Descriptor) (*Index, error) {
	f, err := openStoreFile(path, os.O_RDONLY, "line index")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxIndexSize || fi.Size() < indexHeader+8 {
		return nil, errBadIndex
	}
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, err
	}
	return parseIndex(b, d)
}
