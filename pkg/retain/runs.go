package retain

import (
	"errors"
	"time"
)

// Runs scans every run of the store, sorted by run id. A run is Active
// when a writer holds its lock or its last activity is within grace of the
// store's clock. A runs-dir that does not exist is an error.
func (s *Store) Runs(grace time.Duration) ([]*RunInfo, error) {
	ids, err := s.RunIDs()
	if err != nil {
		return nil, err
	}
	var out []*RunInfo
	for _, id := range ids {
		ri, err := s.ScanRun(id)
		if errors.Is(err, ErrNotFound) || errors.Is(err, ErrCollected) {
			continue // collected while we looked
		}
		if errors.Is(err, ErrCorrupt) {
			// One refused run must not hide the others.
			out = append(out, &RunInfo{Run: id, Refused: err.Error()})
			continue
		}
		if err != nil {
			return nil, err
		}
		ri.Busy, err = s.RunBusy(id)
		if errors.Is(err, ErrCorrupt) {
			// A lock retval did not make (a symlink): refused, as a run
			// directory that is not ours; the other runs are listed.
			out = append(out, &RunInfo{Run: id, Refused: err.Error()})
			continue
		}
		if err != nil {
			return nil, err
		}
		ri.Active = ri.Busy || s.now().Sub(ri.LastActivity) < grace
		out = append(out, ri)
	}
	return out, nil
}

// RunIDs lists the runs of the store, sorted. Other names and plain files
// are left out; a symlink with a run's name is listed (it is never
// followed: opening it as a run is refused as corrupt), so that verify,
// catalogue and gc report it instead of passing over it in silence.
func (s *Store) RunIDs() ([]ID, error) {
	b, err := s.backend()
	if err != nil {
		return nil, err
	}
	return b.RunIDs()
}

// ScanRun lists a run directory with sizes, modification times and what
// each entry is. It reads directories, file metadata and the descriptors
// of values that have content (to count committed values by the one
// rule), never content.
func (s *Store) ScanRun(run ID) (*RunInfo, error) {
	ri, err := s.ScanRunEntries(run)
	if err != nil {
		return nil, err
	}
	s.CountValues(ri)
	return ri, nil
}

// ScanRunEntries is ScanRun without the count of values (Values is left
// 0), so it reads no descriptor but in the rare case a value has both a
// plain and a compressed content file: for a caller that needs the count
// of only some runs (gc, of the runs it removes), with CountValues.
func (s *Store) ScanRunEntries(run ID) (*RunInfo, error) {
	b, err := s.backend()
	if err != nil {
		return nil, err
	}
	return b.ScanRunEntries(run)
}

// CountValues sets ri.Values to the number of the run's committed values,
// by the one rule (committedValue): it reads every descriptor
// ScanRunEntries found.
func (s *Store) CountValues(ri *RunInfo) {
	b, err := s.backend()
	if err != nil {
		return
	}
	committed := b.CommittedIn(ri)
	ri.Values = 0
	for _, e := range ri.Entries {
		if e.Kind == KindValue && e.Name == metaName(e.Value) {
			if _, prob := committed(e.Value); prob == nil {
				ri.Values++
			}
		}
	}
}

// RunBusy reports whether a writer holds run's lock: it tries to take the
// lock exclusively without waiting and lets go at once. A run without a
// lock file has never had a writer and is not busy; one whose lock is not
// a regular file is a corrupt *BadLockError.
func (s *Store) RunBusy(run ID) (bool, error) {
	b, err := s.backend()
	if err != nil {
		return false, err
	}
	return b.RunBusy(run)
}
