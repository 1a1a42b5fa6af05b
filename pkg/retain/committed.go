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

// describes is the descriptor's half of the one rule, for a runs-dir and
// object storage alike: d (read with err) is value id's, with a known
// compression.
func describes(id ID, d *Descriptor, err error) *valueProblem {
	meta := metaName(id)
	switch {
	case err != nil:
		return &valueProblem{File: meta, Kind: ProblemCorrupt, Message: fmt.Sprintf("descriptor unreadable: %v", err)}
	case d.ID != id:
		return &valueProblem{File: meta, Kind: ProblemCorrupt, Message: fmt.Sprintf("descriptor names value %q", d.ID)}
	case d.Compression != CompressNone && d.Compression != CompressZstd:
		return &valueProblem{File: meta, Kind: ProblemCorrupt, Message: fmt.Sprintf("unknown compression %q", d.Compression)}
	}
	return nil
}

// orphanOtherContent marks, among ri's entries of value id, a content file
// in the representation d does not name as an orphan: a value with both a
// plain and a compressed content file owns only the one its descriptor
// names; the other is a stray copy.
func orphanOtherContent(ri *RunInfo, id ID, d *Descriptor) {
	for i := range ri.Entries {
		e := &ri.Entries[i]
		if e.Value == id && e.Kind == KindValue && e.Name != metaName(id) && e.Name != linesName(id) && e.Name != contentName(id, d.Compression) {
			e.Kind = KindOrphan
		}
	}
}

// classifyValueFile sets the kind of e, a file named for value id: the
// value's own when id has a descriptor (descs), else an orphan. Content
// files are counted in content, so that a value with two can be told.
func classifyValueFile(e *RunEntry, id ID, descs map[ID]bool, content map[ID]int) {
	e.Value = id
	if descs[id] {
		e.Kind = KindValue
	} else {
		e.Kind, e.descAbsent = KindOrphan, true
	}
	if e.Name != metaName(id) && e.Name != linesName(id) {
		content[id]++
	}
}
