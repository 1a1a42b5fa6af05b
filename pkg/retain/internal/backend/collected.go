package backend

import (
	"slices"
	"time"

	"github.com/retval/retval/pkg/retain/internal/format"
)

// Tombstones is what the rules about collected runs read and write: a
// backend's tombstones, and gc's other records beside them.
type Tombstones interface {
	ReadTombstone(run format.ID) (*format.Tombstone, bool)
	ReadTombstoneEntry(name string, max int64) ([]byte, error)
	WriteTombstoneEntry(name string, b []byte) error
}

// MissingRun is the error for a run that is not there in the store at
// dir: collected, when gc left a tombstone, or unknown.
func MissingRun(t Tombstones, dir string, run format.ID) error {
	if t, ok := t.ReadTombstone(run); ok {
		return format.CollectedError(t)
	}
	return &format.Error{Code: format.CodeUnknownReference, Err: &format.UnknownRunError{Run: run, Dir: dir}}
}

// CollectedIn returns the collection that removed value id from run, if
// gc's record of the run names it. A missing, unreadable or hostile
// record (a link, a FIFO, too large) names nothing.
func CollectedIn(t Tombstones, run, id format.ID) (format.Generation, bool) {
	b, err := t.ReadTombstoneEntry(format.CollectedIDsName(run), format.MaxCollectedIDsBytes)
	if err != nil {
		return format.Generation{}, false
	}
	c, err := format.ParseCollectedIDs(format.CollectedIDsName(run), b)
	if err != nil {
		return format.Generation{}, false
	}
	for _, g := range slices.Backward(c.Generations) {
		if slices.Contains(g.IDs, id) {
			return g, true
		}
	}
	return format.Generation{}, false
}

// MissingValue is the error of value id (typed as given) that run, which
// exists, does not hold: collected, when gc removed it from an earlier
// generation of the run; else unknown_reference with the run's ids
// nearest to it (nearest is asked only then).
func MissingValue(t Tombstones, run format.ID, typed string, id format.ID, nearest func() []format.ID) error {
	if g, ok := CollectedIn(t, run, id); ok {
		err := format.Errorf(format.CodeCollected, "value %q of run %q was collected by gc at %s; the run was written again since", typed, run, g.Collected.UTC().Format(time.RFC3339))
		return format.WithHint(err, "gc removed the value with the rest of the run as it was then; run the tool again to get its output back")
	}
	return &format.Error{Code: format.CodeUnknownReference, Err: &format.UnknownValueError{Run: run, ID: typed, Nearest: nearest()}}
}

// RememberCollected adds the values of ri, a run gc is about to collect,
// to the run's collected-ids record, as a generation collected at at. gc
// calls it (under its lock or lease, so nobody else writes the record)
// before it writes the run's tombstone; a collection that stops after it
// leaves ids that are still values of the run, which a lookup finds
// before it asks the record. A record that cannot be read (damaged, a
// link, too large) is replaced: it answered no lookup either.
func RememberCollected(t Tombstones, ri *format.RunInfo, at time.Time) error {
	var ids []format.ID
	for _, e := range ri.Entries {
		if e.Kind == format.KindValue && e.Name == format.MetaName(e.Value) {
			ids = append(ids, e.Value)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	name := format.CollectedIDsName(ri.Run)
	c := &format.CollectedIDs{Run: ri.Run}
	if b, err := t.ReadTombstoneEntry(name, format.MaxCollectedIDsBytes); err == nil {
		if old, err := format.ParseCollectedIDs(name, b); err == nil {
			c = old
		}
	}
	c.Generations = append(c.Generations, format.Generation{Collected: at, IDs: ids})
	b, err := c.Marshal()
	if err != nil {
		return err
	}
	return t.WriteTombstoneEntry(name, b)
}
