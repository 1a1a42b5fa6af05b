package gc

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/retval/retval/pkg/retain"
)

// Execute carries out a plan: trash left by an interrupted gc first, then
// expired tombstones, then runs (in parallel), then debris. Each step is
// re-checked under the run's exclusive lock: a run that became busy or
// changed since the plan is skipped and reported, never removed. The caller
// holds the store's gc lock (Collect does). The error, when not nil, says
// how many actions failed; the report lists them.
//
// Every directory is worked in through a descriptor opened without
// following a symlink, relative to the runs-dir's: nothing outside the
// runs-dir is touched, whatever links the store holds.
func Execute(s *retain.Store, p *Plan, o Options) (*Report, error) {
	r := &Report{Now: p.Now, Runs: p.Runs, Bytes: p.Bytes, Skipped: slices.Clone(p.Skip), Failed: slices.Clone(p.Refused)}
	total := len(p.Trash) + len(p.Tombstones) + len(p.Remove) + len(p.Debris)
	if total == 0 {
		r.tally()
		return r, r.err(len(r.Failed))
	}
	c, err := s.OpenCollection(len(p.Remove) > 0)
	if err != nil {
		return nil, err
	}
	defer c.Close()

	var mu sync.Mutex
	done := 0
	step := func(n int) {
		mu.Lock()
		done += n
		o.progress("collect", done, total)
		mu.Unlock()
	}
	o.progress("collect", 0, total)
	fail := func(run retain.ID, path string, err error) {
		mu.Lock()
		r.Failed = append(r.Failed, Failure{Run: run, Path: path, Error: err.Error()})
		mu.Unlock()
	}

	for _, t := range p.Trash {
		if err := c.EmptyTrash(t.name); err != nil {
			fail("", t.Path, err)
		} else {
			r.Trash = append(r.Trash, t)
		}
		step(1)
	}
	for _, t := range p.Tombstones {
		var err error
		if t.tombstone {
			err = s.RemoveTombstone(t.Run)
		}
		if err == nil && t.ids != "" {
			err = s.RemoveTombstoneFile(t.ids)
		}
		if err != nil {
			fail(t.Run, "", fmt.Errorf("could not remove the tombstone of run %s: %w", t.Run, err))
		} else {
			r.Tombstones = append(r.Tombstones, t)
		}
		step(1)
	}

	if len(p.Remove) > 0 {
		results := make([]*Skip, len(p.Remove))
		okRemoved := make([]bool, len(p.Remove))
		parallel(len(p.Remove), o.workers(), func(i int) {
			rm := &p.Remove[i]
			var rerr error
			results[i], rerr = removeRun(c, rm, p.Now)
			switch {
			case rerr != nil:
				fail(rm.Run, "", rerr)
			case results[i] == nil:
				okRemoved[i] = true
			}
			step(1)
		})
		for i, rm := range p.Remove {
			if okRemoved[i] {
				r.Removed = append(r.Removed, rm)
			} else if results[i] != nil {
				r.Skipped = append(r.Skipped, *results[i])
			}
		}
	}

	// Debris, one run at a time under its lock; the store's own under ours.
	byRun := map[retain.ID][]Debris{}
	var runs []retain.ID
	for _, d := range p.Debris {
		if d.Run == "" {
			if err := s.RemoveTombstoneFile(d.tombstone); err != nil {
				fail("", d.Path, err)
			} else {
				r.Debris = append(r.Debris, d)
			}
			step(1)
			continue
		}
		if byRun[d.Run] == nil {
			runs = append(runs, d.Run)
		}
		byRun[d.Run] = append(byRun[d.Run], d)
	}
	removedDebris := make([][]Debris, len(runs))
	debrisSkips := make([]*Skip, len(runs))
	grace := o.grace()
	parallel(len(runs), o.workers(), func(i int) {
		ds := byRun[runs[i]]
		out, skip, errs := removeDebris(c, runs[i], ds, p.Now, grace)
		removedDebris[i], debrisSkips[i] = out, skip
		for _, e := range errs {
			fail(runs[i], e.Path, e.Err)
		}
		step(len(ds))
	})
	for i := range runs {
		r.Debris = append(r.Debris, removedDebris[i]...)
		if debrisSkips[i] != nil {
			r.Skipped = append(r.Skipped, *debrisSkips[i])
		}
	}
	r.tally()
	return r, r.err(total)
}

// removeRun collects one run (retain re-checks it under its exclusive
// lock) and says why it was skipped, if it was.
func removeRun(c *retain.Collection, rm *Removal, now time.Time) (*Skip, error) {
	err := c.CollectRun(rm.info, retain.Tombstone{Run: rm.Run, Collected: now.UTC(), Values: rm.Values, Bytes: rm.Bytes})
	var changed *retain.RunChangedError
	switch {
	case errors.Is(err, retain.ErrBusy):
		return &Skip{Run: rm.Run, Rule: rm.Rule, Reason: SkipBusy, Message: "a writer holds its lock"}, nil
	case errors.Is(err, retain.ErrNotFound) || errors.Is(err, retain.ErrCollected):
		return &Skip{Run: rm.Run, Rule: rm.Rule, Reason: SkipGone, Message: "the run disappeared since the plan was made"}, nil
	case errors.As(err, &changed):
		return &Skip{Run: rm.Run, Rule: rm.Rule, Reason: SkipChanged, Message: changed.What + " since the plan was made"}, nil
	}
	return nil, err
}

// removeDebris removes one run's debris (retain re-checks each file under
// the run's exclusive lock) and says why it was skipped, if it was.
func removeDebris(c *retain.Collection, run retain.ID, ds []Debris, now time.Time, grace time.Duration) ([]Debris, *Skip, []retain.DebrisError) {
	entries := make([]retain.RunEntry, len(ds))
	for i, d := range ds {
		entries[i] = d.entry
	}
	removed, errs, err := c.RemoveDebris(run, entries, now, grace)
	switch {
	case errors.Is(err, retain.ErrBusy):
		return nil, &Skip{Run: run, Rule: RuleDebris, Reason: SkipBusy,
			Message: fmt.Sprintf("a writer holds its lock; %d debris files left for the next gc", len(ds))}, nil
	case errors.Is(err, retain.ErrNotFound) || errors.Is(err, retain.ErrCollected):
		return nil, &Skip{Run: run, Rule: RuleDebris, Reason: SkipGone, Message: "the run disappeared since the plan was made"}, nil
	case err != nil:
		return nil, nil, []retain.DebrisError{{Err: err}}
	}
	var out []Debris
	for i, ok := range removed {
		if ok {
			out = append(out, ds[i])
		}
	}
	return out, nil, errs
}
