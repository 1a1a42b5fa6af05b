package local

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/retval/retval/internal/fsx"
	"github.com/retval/retval/pkg/retain/internal/backend"
	"github.com/retval/retval/pkg/retain/internal/format"
)

// A runs-dir's own checks beside those verify makes of every value
// (retain.Store.Verify): the run's lock, the file types of what is read, and the
// read log as one file of lines.

// VerifyHold holds run's lock shared while verify checks it. A lock that
// is not a file retval makes stops no writer and no gc (gc refuses the
// run): it is reported, and the values are checked all the same.
func (b *Backend) VerifyHold(run format.ID) (func(), bool, []format.Problem, error) {
	l, err := b.lockRun(run, false)
	var bad *BadLockError
	switch {
	case errors.As(err, &bad):
		return func() {}, true, []format.Problem{{File: format.LockName, Kind: format.ProblemCorrupt, Message: bad.Error()}}, nil
	case err != nil:
		return nil, false, nil, err
	}
	return func() { l.Unlock() }, true, nil, nil
}

// CollectedSince: a run verify held cannot have been collected meanwhile.
func (b *Backend) CollectedSince(format.ID) bool { return false }

func (b *Backend) CommittedIn(ri *format.RunInfo) func(format.ID) (*format.Descriptor, *format.ValueProblem) {
	return func(id format.ID) (*format.Descriptor, *format.ValueProblem) { return committedValue(ri.Dir, id) }
}

func (b *Backend) ReadIndex(run format.ID, d *format.Descriptor) (*format.Index, error) {
	return readIndex(filepath.Join(b.runDir(run), format.LinesName(d.ID)), d)
}

// OpenForVerify opens the content file, never through a link, and only a
// regular file of the size d records.
func (b *Backend) OpenForVerify(run format.ID, d *format.Descriptor) (backend.VerifyContent, *format.ValueProblem) {
	f, err := fsx.Open(filepath.Join(b.runDir(run), format.ContentName(d.ID, d.Compression)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return backend.VerifyContent{}, backend.ContentMissing(d)
	case errors.Is(err, fsx.ErrSymlink):
		return backend.VerifyContent{}, backend.ContentCorrupt(d, "content file is a symlink")
	case errors.Is(err, fsx.ErrNotRegular):
		return backend.VerifyContent{}, backend.ContentCorrupt(d, "content is not a regular file")
	case err != nil:
		return backend.VerifyContent{}, backend.ContentCorrupt(d, "cannot open content: %v", err)
	}
	fi, err := f.Stat()
	var prob *format.ValueProblem
	switch {
	case err != nil:
		prob = backend.ContentCorrupt(d, "%v", err)
	case !fi.Mode().IsRegular():
		prob = backend.ContentCorrupt(d, "content is not a regular file")
	case fi.Size() != d.StoredBytes:
		prob = backend.ContentCorrupt(d, "content file holds %d bytes, descriptor says %d", fi.Size(), d.StoredBytes)
	}
	if prob != nil {
		f.Close()
		return backend.VerifyContent{}, prob
	}
	return backend.VerifyContent{R: f, At: f, Close: func() { f.Close() }}, nil
}

// VerifyReads checks the read log: a regular file of well-formed records.
func (b *Backend) VerifyReads(ri *format.RunInfo, e format.RunEntry) (format.Problem, bool) {
	p := format.Problem{File: e.Name, Kind: format.ProblemCorrupt}
	if e.Kind != format.KindOwn {
		p.Message = "the read log is not a regular file: retval never makes one (remove it; stats counts nothing in it, and gc removes it as a stray)"
		return p, true
	}
	info, err := b.ScanReads(ri.Run, func(*format.Read) {})
	switch {
	case err != nil:
		p.Message = fmt.Sprintf("read log unreadable: %v", err)
	case info.Malformed > 0:
		p.Message = fmt.Sprintf("the read log has %d lines that are not records (the first is line %d): stats skips them; remove the file to start a new log", info.Malformed, info.FirstMalformed)
	default:
		return p, false
	}
	return p, true
}
