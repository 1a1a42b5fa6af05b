package format

import (
	"fmt"
)

// ValueProblem says why a descriptor in a run directory is not a committed
// value: the file it concerns, and whether it is corrupt or missing.
type ValueProblem struct {
	File    string
	Kind    string // ProblemCorrupt or ProblemMissing
	Message string
}

func (p *ValueProblem) Problem() Problem {
	return Problem{File: p.File, Kind: p.Kind, Message: p.Message}
}

// Describes is the descriptor's half of the one rule, for a runs-dir and
// object storage alike: d (read with err) is value id's, with a known
// compression.
func Describes(id ID, d *Descriptor, err error) *ValueProblem {
	meta := MetaName(id)
	switch {
	case err != nil:
		return &ValueProblem{File: meta, Kind: ProblemCorrupt, Message: fmt.Sprintf("descriptor unreadable: %v", err)}
	case d.ID != id:
		return &ValueProblem{File: meta, Kind: ProblemCorrupt, Message: fmt.Sprintf("descriptor names value %q", d.ID)}
	case d.Compression != CompressNone && d.Compression != CompressZstd:
		return &ValueProblem{File: meta, Kind: ProblemCorrupt, Message: fmt.Sprintf("unknown compression %q", d.Compression)}
	}
	return nil
}

// OrphanOtherContent marks, among ri's entries of value id, a content file
// in the representation d does not name as an orphan: a value with both a
// plain and a compressed content file owns only the one its descriptor
// names; the other is a stray copy.
func OrphanOtherContent(ri *RunInfo, id ID, d *Descriptor) {
	for i := range ri.Entries {
		e := &ri.Entries[i]
		if e.Value == id && e.Kind == KindValue && e.Name != MetaName(id) && e.Name != LinesName(id) && e.Name != ContentName(id, d.Compression) {
			e.Kind = KindOrphan
		}
	}
}

// ClassifyValueFile sets the kind of e, a file named for value id: the
// value's own when id has a descriptor (descs), else an orphan. Content
// files are counted in content, so that a value with two can be told.
func ClassifyValueFile(e *RunEntry, id ID, descs map[ID]bool, content map[ID]int) {
	e.Value = id
	if descs[id] {
		e.Kind = KindValue
	} else {
		e.Kind, e.DescAbsent = KindOrphan, true
	}
	if e.Name != MetaName(id) && e.Name != LinesName(id) {
		content[id]++
	}
}
