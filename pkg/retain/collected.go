package retain

import (
	"slices"
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
	b, err := c.Marshal()
	if err != nil {
		return err
	}
	return t.writeTombstoneEntry(name, b)
}
