package retain

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// valueProblem says why a descriptor in a run directory is not a committed
// value: the file it concerns, and whether it is corrupt or missing.
type valueProblem struct {
	File    string
	Kind    string // ProblemCorrupt or ProblemMissing
	Message string
}

func (p *valueProblem) problem() Problem {
	return Problem{File: p.File, Kind: p.Kind, Message: p.Message}
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
	meta := metaName(id)
	d, err := readDescriptor(filepath.Join(dir, meta))
	if err != nil {
		return nil, &valueProblem{File: meta, Kind: ProblemCorrupt, Message: fmt.Sprintf("descriptor unreadable: %v", err)}
	}
	if d.ID != id {
		return d, &valueProblem{File: meta, Kind: ProblemCorrupt, Message: fmt.Sprintf("descriptor names value %q", d.ID)}
	}
	if d.Compression != CompressNone && d.Compression != CompressZstd {
		return d, &valueProblem{File: meta, Kind: ProblemCorrupt, Message: fmt.Sprintf("unknown compression %q", d.Compression)}
	}
	name := contentName(id, d.Compression)
	bad := func(format string, args ...any) (*Descriptor, *valueProblem) {
		return d, &valueProblem{File: name, Kind: ProblemCorrupt, Message: fmt.Sprintf(format, args...)}
	}
	fi, err := os.Lstat(filepath.Join(dir, name))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return d, &valueProblem{File: name, Kind: ProblemMissing, Message: fmt.Sprintf("content file missing: %s has no %s", meta, name)}
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
