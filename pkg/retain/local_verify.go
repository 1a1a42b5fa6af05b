package retain

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/retval/retval/internal/fsx"
)

// A runs-dir's own checks beside those verify makes of every value
// (verify.go): the run's lock, the file types of what is read, and the
// read log as one file of lines.

// verifyHold holds run's lock shared while verify checks it. A lock that
// is not a file retval makes stops no writer and no gc (gc refuses the
// run): it is reported, and the values are checked all the same.
func (b *localBackend) verifyHold(run ID) (func(), bool, []Problem, error) {
	l, err := b.lockRun(run, false)
	var bad *BadLockError
	switch {
	case errors.As(err, &bad):
		return func() {}, true, []Problem{{File: lockName, Kind: ProblemCorrupt, Message: bad.Error()}}, nil
	case err != nil:
		return nil, false, nil, err
	}
	return func() { l.Unlock() }, true, nil, nil
}

// collectedSince: a run verify held cannot have been collected meanwhile.
func (b *localBackend) collectedSince(ID) bool { return false }

func (b *localBackend) committedIn(ri *RunInfo) func(ID) (*Descriptor, *valueProblem) {
	return func(id ID) (*Descriptor, *valueProblem) { return committedValue(ri.Dir, id) }
}

func (b *localBackend) readIndex(run ID, d *Descriptor) (*Index, error) {
	return readIndex(filepath.Join(b.runDir(run), linesName(d.ID)), d)
}

// openForVerify opens the content file, never through a link, and only a
// regular file of the size d records.
func (b *localBackend) openForVerify(run ID, d *Descriptor) (verifyContent, *valueProblem) {
	f, err := fsx.Open(filepath.Join(b.runDir(run), contentName(d.ID, d.Compression)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return verifyContent{}, contentMissing(d)
	case errors.Is(err, fsx.ErrSymlink):
		return verifyContent{}, contentCorrupt(d, "content file is a symlink")
	case errors.Is(err, fsx.ErrNotRegular):
		return verifyContent{}, contentCorrupt(d, "content is not a regular file")
	case err != nil:
		return verifyContent{}, contentCorrupt(d, "cannot open content: %v", err)
	}
	fi, err := f.Stat()
	var prob *valueProblem
	switch {
	case err != nil:
		prob = contentCorrupt(d, "%v", err)
	case !fi.Mode().IsRegular():
		prob = contentCorrupt(d, "content is not a regular file")
	case fi.Size() != d.StoredBytes:
		prob = contentCorrupt(d, "content file holds %d bytes, descriptor says %d", fi.Size(), d.StoredBytes)
	}
	if prob != nil {
		f.Close()
		return verifyContent{}, prob
	}
	return verifyContent{r: f, at: f, close: func() { f.Close() }}, nil
}

// verifyReads checks the read log: a regular file of well-formed records.
func (b *localBackend) verifyReads(ri *RunInfo, e RunEntry) (Problem, bool) {
	p := Problem{File: e.Name, Kind: ProblemCorrupt}
	if e.Kind != KindOwn {
		p.Message = "the read log is not a regular file: retval never makes one (remove it; stats counts nothing in it, and gc removes it as a stray)"
		return p, true
	}
	info, err := b.scanReads(ri.Run, func(*Read) {})
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
