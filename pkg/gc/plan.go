package gc

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/retval/retval/pkg/retain"
)

// Removal is a run the plan removes.
type Removal struct {
	Run          retain.ID `json:"run"`
	Rule         string    `json:"rule"`
	Values       int       `json:"values"`
	Bytes        int64     `json:"bytes"`
	LastActivity time.Time `json:"last_activity"`
	info         *retain.RunInfo
}

// Skip is a run (or a run's debris) a rule would have removed but that gc
// left alone, and why.
type Skip struct {
	Run     retain.ID `json:"run"`
	Rule    string    `json:"rule"`
	Reason  string    `json:"reason"`
	Message string    `json:"message"`
}

// Debris is a file that belongs to no committed value, old enough to go.
type Debris struct {
	Run retain.ID `json:"run,omitempty"`
	// Path is relative to the runs-dir.
	Path  string `json:"path"`
	Kind  string `json:"kind"` // temp, orphan or stray
	Bytes int64  `json:"bytes"`
	// entry is the run's entry as scanned (RemoveDebris re-checks it).
	entry retain.RunEntry
	// tombstone is the name of an entry of the tombstone directory (Run
	// is then empty).
	tombstone string
}

// Trash is what an interrupted gc left in .retval/trash.
type Trash struct {
	Path  string `json:"path"` // relative to the runs-dir
	Bytes int64  `json:"bytes"`
	name  string // in the trash
}

// Expired is a tombstone old enough to be dropped, with the run's
// collected-ids record when that is as old (or the record alone, when the
// run was written again since its last collection).
type Expired struct {
	Run       retain.ID `json:"run"`
	Collected time.Time `json:"collected"`
	tombstone bool      // the run's tombstone expired
	ids       string    // the entry of its collected-ids record that expired, or ""
}

// Failure is an action that could not be done, or a part of the store gc
// refused to work in.
type Failure struct {
	Run   retain.ID `json:"run,omitempty"`
	Path  string    `json:"path,omitempty"`
	Error string    `json:"error"`
}

// Plan is what gc will do, decided from one scan of the store.
type Plan struct {
	Now        time.Time
	Runs       int   // runs in the store when planned
	Bytes      int64 // their apparent size
	Trash      []Trash
	Tombstones []Expired
	Remove     []Removal
	Debris     []Debris
	Skip       []Skip
	// Refused are the parts of the runs-dir's own .retval that gc will not
	// work in (a symlink in place of trash or tombstones): the real run
	// and the dry run report them as failures, and gc exits 1.
	Refused []Failure
}

// MakePlan scans the store and decides what to remove. It changes nothing
// (it tries run locks, without waiting, to see which runs are busy). A
// runs-dir that does not exist yet is an empty store: an empty plan.
func MakePlan(s *retain.Store, o Options) (*Plan, error) {
	now := s.Clock()
	grace, maxAge := o.grace(), o.maxAge()
	if missing, err := s.RunsDirMissing(); err != nil {
		return nil, err
	} else if missing {
		return &Plan{Now: now}, nil
	}
	ids, err := s.RunIDs()
	if err != nil {
		return nil, err
	}
	infos, refused, err := scanAll(s, ids, &o)
	if err != nil {
		return nil, err
	}
	p := &Plan{Now: now, Runs: len(infos), Skip: refused}
	for _, ri := range infos {
		p.Bytes += ri.Bytes
	}
	blocked, err := p.planStoreDir(s, &o)
	if err != nil {
		return nil, err
	}

	busy := map[retain.ID]bool{}
	badLock := map[retain.ID]string{} // runs whose lock gc refuses, and why
	isBusy := func(ri *retain.RunInfo) bool {
		b, ok := busy[ri.Run]
		if !ok {
			// A lock we cannot even try counts as busy: never guess. A
			// lock retval did not make (a symlink) is no writer's: the
			// run is refused, and said so, not busy for ever.
			var err error
			b, err = s.RunBusy(ri.Run)
			if errors.Is(err, retain.ErrCorrupt) {
				badLock[ri.Run] = err.Error()
			}
			b = b || err != nil
			busy[ri.Run] = b
		}
		return b
	}
	// skipBusy is the skip of a run isBusy found busy (or refused).
	skipBusy := func(ri *retain.RunInfo, rule, busyMessage string) Skip {
		if why, ok := badLock[ri.Run]; ok {
			return Skip{Run: ri.Run, Rule: rule, Reason: SkipRefused, Message: why}
		}
		return Skip{Run: ri.Run, Rule: rule, Reason: SkipBusy, Message: busyMessage}
	}
	// Debris per run, by age alone; busy runs keep theirs for now.
	debris := map[retain.ID][]Debris{}
	for _, ri := range infos {
		for _, e := range ri.Entries {
			if e.Kind.Debris() && now.Sub(e.ModTime) >= grace {
				debris[ri.Run] = append(debris[ri.Run], Debris{Run: ri.Run, Path: e.Path, Kind: e.Kind.String(), Bytes: e.Bytes, entry: e})
			}
		}
	}

	// Oldest first: the order of the size and count rules.
	order := slices.Clone(infos)
	slices.SortStableFunc(order, func(a, b *retain.RunInfo) int {
		if c := a.LastActivity.Compare(b.LastActivity); c != 0 {
			return c
		}
		return strings.Compare(string(a.Run), string(b.Run))
	})
	removed := map[retain.ID]bool{}
	remove := func(ri *retain.RunInfo, rule string) bool {
		if idle := now.Sub(ri.LastActivity); idle < grace {
			p.Skip = append(p.Skip, Skip{Run: ri.Run, Rule: rule, Reason: SkipActive,
				Message: fmt.Sprintf("last active %s ago, within the grace period (%s)", Age(idle), Age(grace))})
			return false
		}
		if isBusy(ri) {
			p.Skip = append(p.Skip, skipBusy(ri, rule, "a writer holds its lock"))
			return false
		}
		if blocked != "" {
			p.Skip = append(p.Skip, Skip{Run: ri.Run, Rule: rule, Reason: SkipRefused, Message: blocked})
			return false
		}
		s.CountValues(ri) // only runs gc removes are counted: the rest need no descriptor read
		p.Remove = append(p.Remove, Removal{Run: ri.Run, Rule: rule, Values: ri.Values, Bytes: ri.Bytes, LastActivity: ri.LastActivity, info: ri})
		removed[ri.Run] = true
		return true
	}
	if maxAge > 0 {
		for _, ri := range order {
			if now.Sub(ri.LastActivity) > maxAge {
				remove(ri, RuleMaxAge)
			}
		}
	}
	if o.MaxBytes > 0 || o.KeepRuns > 0 {
		var total int64
		count := 0
		for _, ri := range order {
			if removed[ri.Run] {
				continue
			}
			count++
			total += ri.Bytes
			if len(debris[ri.Run]) > 0 && !isBusy(ri) {
				for _, d := range debris[ri.Run] {
					total -= d.Bytes
				}
			}
		}
		for _, ri := range order {
			var rule string
			switch {
			case o.MaxBytes > 0 && total > o.MaxBytes:
				rule = RuleMaxBytes
			case o.KeepRuns > 0 && count > o.KeepRuns:
				rule = RuleKeepRuns
			}
			if rule == "" {
				break
			}
			if removed[ri.Run] || !remove(ri, rule) {
				continue
			}
			count--
			total -= ri.Bytes
			if len(debris[ri.Run]) > 0 && !isBusy(ri) {
				for _, d := range debris[ri.Run] {
					total += d.Bytes // counted as freed above already
				}
			}
		}
	}
	for _, ri := range infos { // by run id
		ds := debris[ri.Run]
		if len(ds) == 0 || removed[ri.Run] {
			continue
		}
		if isBusy(ri) {
			p.Skip = append(p.Skip, skipBusy(ri, RuleDebris, fmt.Sprintf("a writer holds its lock; %d debris files left for the next gc", len(ds))))
			continue
		}
		p.Debris = append(p.Debris, ds...)
	}
	return p, nil
}

// scanAll scans runs in parallel; runs collected meanwhile are left out,
// and so are runs the store refuses (another user's directory): those are
// returned as skips, so that one of them does not stop every collection.
func scanAll(s *retain.Store, ids []retain.ID, o *Options) ([]*retain.RunInfo, []Skip, error) {
	infos := make([]*retain.RunInfo, len(ids))
	errs := make([]error, len(ids))
	refusedBy := make([]error, len(ids))
	var mu sync.Mutex
	done := 0
	o.progress("scan", 0, len(ids))
	parallel(len(ids), o.workers(), func(i int) {
		ri, err := s.ScanRunEntries(ids[i])
		if errors.Is(err, retain.ErrNotFound) || errors.Is(err, retain.ErrCollected) {
			err = nil
		}
		if errors.Is(err, retain.ErrCorrupt) {
			refusedBy[i], err = err, nil
		}
		infos[i], errs[i] = ri, err
		mu.Lock()
		done++
		o.progress("scan", done, len(ids))
		mu.Unlock()
	})
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	var refused []Skip
	for i, err := range refusedBy {
		if err != nil {
			refused = append(refused, Skip{Run: ids[i], Rule: RuleScan, Reason: SkipRefused, Message: err.Error()})
		}
	}
	return slices.DeleteFunc(infos, func(ri *retain.RunInfo) bool { return ri == nil }), refused, nil
}

// planStoreDir plans the runs-dir's own cleanup: an interrupted gc's trash,
// its temporary tombstone files, damaged tombstones and expired ones. A
// trash or tombstone directory gc refuses (a symlink, say) is recorded in
// p.Refused; blocked then says why no run can be removed.
func (p *Plan) planStoreDir(s *retain.Store, o *Options) (blocked string, err error) {
	c, err := s.OpenCollection(false)
	if err != nil {
		return "", err
	}
	defer c.Close()
	trash, err := c.Trash()
	var re *retain.RefusedError
	switch {
	case errors.As(err, &re):
		f := refusedEntry(re, "gc moves no run into it and empties nothing through it")
		p.Refused = append(p.Refused, f)
		blocked = "not moved out of the store: gc refuses " + f.Path + " (see the failure below)"
	case err != nil:
		return "", err
	}
	for _, t := range trash {
		p.Trash = append(p.Trash, Trash{Path: t.Path, Bytes: t.Bytes, name: t.Name})
	}

	files, err := s.TombstoneFiles()
	switch {
	case errors.As(err, &re):
		f := refusedEntry(re, "gc writes, reads and drops no tombstone through it")
		p.Refused = append(p.Refused, f)
		if blocked == "" {
			blocked = "not removed: its tombstone could not be written, as gc refuses " + f.Path + " (see the failure below)"
		}
		return blocked, nil
	case err != nil:
		return "", err
	}
	slices.SortFunc(files, func(a, b retain.TombstoneFile) int { return strings.Compare(a.Name, b.Name) })
	ttl := o.tombstoneTTL()
	idsExpired := map[retain.ID]retain.TombstoneFile{}
	for _, f := range files {
		switch {
		case f.Temp:
			// Only gc writes here, and we hold gc's lock: its writer is gone.
			p.Debris = append(p.Debris, Debris{Path: f.Path, Kind: retain.KindTemp.String(), Bytes: f.Bytes, tombstone: f.Name})
		case f.IDs != nil:
			// A run's collected-ids record goes with the tombstone of its
			// last collection: when that one would expire.
			if ttl > 0 && p.Now.Sub(f.IDs.Newest()) >= ttl {
				idsExpired[f.IDs.Run] = f
			}
		case f.Tombstone == nil:
			// Not a tombstone (a link, a FIFO, a directory, too large,
			// unreadable): it answers no lookup, and gc wrote none like it.
			p.Debris = append(p.Debris, Debris{Path: f.Path, Kind: retain.KindStray.String(), Bytes: f.Bytes, tombstone: f.Name})
		case ttl > 0 && p.Now.Sub(f.Tombstone.Collected) >= ttl:
			p.Tombstones = append(p.Tombstones, Expired{Run: f.Tombstone.Run, Collected: f.Tombstone.Collected, tombstone: true})
		}
	}
	// One entry per run: its tombstone and its record expire together.
	for i, t := range p.Tombstones {
		if f, ok := idsExpired[t.Run]; ok {
			p.Tombstones[i].ids = f.Name
			delete(idsExpired, t.Run)
		}
	}
	for _, f := range files {
		if f.IDs != nil && idsExpired[f.IDs.Run].Name == f.Name {
			p.Tombstones = append(p.Tombstones, Expired{Run: f.IDs.Run, Collected: f.IDs.Newest(), ids: f.Name})
		}
	}
	return blocked, nil
}

// refusedEntry is the failure for a part of .retval gc will not use.
func refusedEntry(re *retain.RefusedError, what string) Failure {
	return Failure{Path: re.Path, Error: fmt.Sprintf("%v; %s: remove it (what it points at is left alone) and run gc again", re.Err, what)}
}
