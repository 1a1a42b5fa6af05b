package retain

import (
	"fmt"
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
