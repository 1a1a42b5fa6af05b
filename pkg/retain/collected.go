package retain

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"
)

// A run's tombstone means "collected, and not written since": the first
// value written into the run again removes it. What a run lived through
// before that is kept beside it, by gc alone, in the run's collected-ids
// record (.retval/tombstones/<run>.ids.json): the ids of the values each
// collection of the run removed. A run written again after gc collected
// it then still answers `collected` for a value of an earlier generation,
// where it would otherwise say unknown_reference and suggest one of the
// new values, whose content is unrelated.

// CollectedIDs is a run's collected-ids record: per collection of the run
// (oldest first), when it happened and the ids of the values it removed.
type CollectedIDs struct {
	Run         ID           `json:"run"`
	Generations []Generation `json:"generations"`
}

// Generation is one collection of a run: when, and the values it removed.
type Generation struct {
	Collected time.Time `json:"collected"`
	IDs       []ID      `json:"ids"`
}

// MaxCollectedIDsBytes bounds a collected-ids record, written and read:
// the ids of a run at its default capacity (1,024 values of at most 64
// bytes) fit many times over. gc drops the oldest generations to keep a
// record within it, then, for a run larger still, the ids that do not fit
// (a lookup of one of those says unknown_reference, as without a record).
const MaxCollectedIDsBytes = 1 << 20

const collectedIDsExt = ".ids.json"

// collectedIDsName is the name of run's collected-ids record in the
// tombstone directory: a run id holds no '.', so it is never a tombstone's.
func collectedIDsName(run ID) string { return string(run) + collectedIDsExt }

// Newest is when the record's last collection happened.
func (c *CollectedIDs) Newest() time.Time {
	if len(c.Generations) == 0 {
		return time.Time{}
	}
	return c.Generations[len(c.Generations)-1].Collected
}

// errNotCollectedIDs says an entry of the tombstone directory named as a
// collected-ids record does not hold one.
var errNotCollectedIDs = errors.New("is not a collected-ids record")

// parseCollectedIDs reads the record b of the tombstone directory's
// entry name.
func parseCollectedIDs(name string, b []byte) (*CollectedIDs, error) {
	var c CollectedIDs
	if json.Unmarshal(b, &c) != nil || !IsClean(string(c.Run)) || name != collectedIDsName(c.Run) {
		return nil, errNotCollectedIDs
	}
	return &c, nil
}

// collectedIn returns the collection that removed value id from run, if
// gc's record of the run names it. A missing, unreadable or hostile
// record (a link, a FIFO, too large) names nothing.
func collectedIn(t tombstones, run, id ID) (Generation, bool) {
	b, err := t.readTombstoneEntry(collectedIDsName(run), MaxCollectedIDsBytes)
	if err != nil {
		return Generation{}, false
	}
	c, err := parseCollectedIDs(collectedIDsName(run), b)
	if err != nil {
		return Generation{}, false
	}
	for _, g := range slices.Backward(c.Generations) {
		if slices.Contains(g.IDs, id) {
			return g, true
		}
	}
	return Generation{}, false
}

// missingValue is the error of value id (typed as given) that run, which
// exists, does not hold: collected, when gc removed it from an earlier
// generation of the run; else unknown_reference with the run's ids
// nearest to it (nearest is asked only then).
func missingValue(t tombstones, run ID, typed string, id ID, nearest func() []ID) error {
	if g, ok := collectedIn(t, run, id); ok {
		err := Errorf(CodeCollected, "value %q of run %q was collected by gc at %s; the run was written again since", typed, run, g.Collected.UTC().Format(time.RFC3339))
		return WithHint(err, "gc removed the value with the rest of the run as it was then; run the tool again to get its output back")
	}
	return &Error{Code: CodeUnknownReference, Err: &UnknownValueError{Run: run, ID: typed, Nearest: nearest()}}
}

// rememberCollected adds the values of ri, a run gc is about to collect,
// to the run's collected-ids record, as a generation collected at at. gc
// calls it (under its lock or lease, so nobody else writes the record)
// before it writes the run's tombstone; a collection that stops after it
// leaves ids that are still values of the run, which a lookup finds
// before it asks the record. A record that cannot be read (damaged, a
// link, too large) is replaced: it answered no lookup either.
func rememberCollected(t tombstones, ri *RunInfo, at time.Time) error {
	var ids []ID
	for _, e := range ri.Entries {
		if e.Kind == KindValue && e.Name == metaName(e.Value) {
			ids = append(ids, e.Value)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	name := collectedIDsName(ri.Run)
	c := &CollectedIDs{Run: ri.Run}
	if b, err := t.readTombstoneEntry(name, MaxCollectedIDsBytes); err == nil {
		if old, err := parseCollectedIDs(name, b); err == nil {
			c = old
		}
	}
	c.Generations = append(c.Generations, Generation{Collected: at, IDs: ids})
	b, err := c.marshal()
	if err != nil {
		return err
	}
	return t.writeTombstoneEntry(name, b)
}

// marshal encodes the record within MaxCollectedIDsBytes, dropping its
// oldest generations and then the last ids of the one left until it fits.
func (c *CollectedIDs) marshal() ([]byte, error) {
	for {
		b, err := json.Marshal(c)
		if err != nil {
			return nil, err
		}
		if len(b)+1 <= MaxCollectedIDsBytes {
			return append(b, '\n'), nil
		}
		if len(c.Generations) > 1 {
			c.Generations = c.Generations[1:]
			continue
		}
		g := &c.Generations[0]
		over := len(b) + 1 - MaxCollectedIDsBytes
		n := len(g.IDs)
		for n > 0 && over > 0 {
			n--
			over -= len(g.IDs[n]) + 3 // the quotes and the comma
		}
		g.IDs = g.IDs[:n]
	}
}

// isCollectedIDsName reports whether name, an entry of the tombstone
// directory, is named as a collected-ids record.
func isCollectedIDsName(name string) bool { return strings.HasSuffix(name, collectedIDsExt) }
