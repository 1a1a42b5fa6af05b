package gc

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/retval/retval/internal/flock"
	"github.com/retval/retval/internal/fsx"
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
	sd, err := openStoreDir(s, len(p.Remove) > 0)
	if err != nil {
		return nil, err
	}
	defer sd.Close()

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

	if len(p.Trash) > 0 {
		trash, err := openOwn(sd, trashName, false)
		for _, t := range p.Trash {
			if err == nil {
				err = trash.RemoveAll(t.name)
			}
			if err != nil {
				fail("", t.Path, err)
			} else {
				r.Trash = append(r.Trash, t)
			}
			step(1)
		}
		trash.Close()
	}
	for _, t := range p.Tombstones {
		if err := s.RemoveTombstone(t.Run); err != nil {
			fail(t.Run, "", fmt.Errorf("could not remove the tombstone of run %s: %w", t.Run, err))
		} else {
			r.Tombstones = append(r.Tombstones, t)
		}
		step(1)
	}

	if len(p.Remove) > 0 {
		trash, err := openOwn(sd, trashName, true)
		results := make([]*Skip, len(p.Remove))
		okRemoved := make([]bool, len(p.Remove))
		parallel(len(p.Remove), o.workers(), func(i int) {
			rm := &p.Remove[i]
			var rerr error
			if err != nil {
				rerr = fmt.Errorf("moving run %s out of the store: %w (run left in place)", rm.Run, err)
			} else {
				results[i], rerr = removeRun(s, sd.root, trash, rm, p.Now)
			}
			switch {
			case rerr != nil:
				fail(rm.Run, "", rerr)
			case results[i] == nil:
				okRemoved[i] = true
			}
			step(1)
		})
		trash.Close()
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
		out, skip, errs := removeDebris(s, sd.root, runs[i], ds, p.Now, grace)
		removedDebris[i], debrisSkips[i] = out, skip
		for _, e := range errs {
			fail(runs[i], e.path, e.err)
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

// openOwn opens (or, with create, makes) an entry of .retval as a
// directory, never following a symlink there.
func openOwn(sd *storeDir, name string, create bool) (*fsx.Dir, error) {
	if sd.own == nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(sd.root.Path(), retain.StoreDir), fs.ErrNotExist)
	}
	if create {
		return sd.own.MkdirOpen(name, dirMode)
	}
	return sd.own.OpenDir(name)
}

// removeRun collects one run: under its exclusive lock, re-checks that it
// has not changed since the scan, writes its tombstone, renames it into the
// trash (syncing the runs-dir and the trash), lets the lock go and deletes
// the files, never following a symlink among them.
func removeRun(s *retain.Store, root, trash *fsx.Dir, rm *Removal, now time.Time) (*Skip, error) {
	l, err := s.LockRunExclusive(rm.Run)
	switch {
	case errors.Is(err, flock.ErrBusy):
		return &Skip{Run: rm.Run, Rule: rm.Rule, Reason: SkipBusy, Message: "a writer holds its lock"}, nil
	case errors.Is(err, retain.ErrNotFound) || errors.Is(err, retain.ErrCollected):
		return &Skip{Run: rm.Run, Rule: rm.Rule, Reason: SkipGone, Message: "the run disappeared since the plan was made"}, nil
	case err != nil:
		return nil, err
	}
	locked := true
	defer func() {
		if locked {
			l.Unlock()
		}
	}()
	name := filepath.Base(rm.info.Dir)
	if changed, err := runChanged(root, name, rm.info); err != nil {
		return nil, err
	} else if changed != "" {
		return &Skip{Run: rm.Run, Rule: rm.Rule, Reason: SkipChanged, Message: changed + " since the plan was made"}, nil
	}
	tomb := retain.Tombstone{Run: rm.Run, Collected: now.UTC(), Values: rm.Values, Bytes: rm.Bytes}
	// On a full disk the tombstone is written after the run's files are
	// deleted: gc is what frees the disk, so it must not need room first.
	// Until then a lookup in the run says unknown_reference.
	late := false
	if err := s.WriteTombstone(tomb); err != nil {
		if !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EDQUOT) {
			return nil, fmt.Errorf("writing the tombstone of run %s: %w (run left in place)", rm.Run, err)
		}
		s.RemoveTombstone(rm.Run) // no half-written one
		late = true
	}
	dst, err := trashEntry(name)
	if err == nil {
		err = root.Rename(name, trash, dst)
	}
	if err != nil {
		if !late {
			s.RemoveTombstone(rm.Run)
		}
		return nil, fmt.Errorf("moving run %s out of the store: %w (run left in place)", rm.Run, err)
	}
	locked = false
	l.Unlock()
	if err := trash.RemoveAll(dst); err != nil {
		return nil, fmt.Errorf("run %s is collected, but deleting its files failed: %w (the next gc finishes it)", rm.Run, err)
	}
	if late {
		if err := s.WriteTombstone(tomb); err != nil {
			return nil, fmt.Errorf("run %s is collected, but its tombstone could not be written: %w (lookups in it say unknown_reference)", rm.Run, err)
		}
	}
	return nil, nil
}

// trashEntry is a fresh name in the trash for the run directory name.
func trashEntry(name string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return name + "." + hex.EncodeToString(b[:]), nil
}

// runChanged tells, under the run's exclusive lock, whether the run gained
// or lost entries, was read, or had a ledger written since it was scanned:
// then the plan's reason to remove it may no longer hold.
func runChanged(root *fsx.Dir, name string, ri *retain.RunInfo) (string, error) {
	dir, err := root.OpenDir(name)
	if err != nil {
		return "", err
	}
	defer dir.Close()
	names, err := dir.Names()
	if err != nil {
		return "", err
	}
	had := map[string]bool{}
	for _, e := range ri.Entries {
		if !strings.Contains(e.Name, "/") {
			had[e.Name] = true
		}
	}
	slices.Sort(names)
	for _, n := range names {
		if !had[n] && n != retain.LockName { // the lock may be ours, just made
			return fmt.Sprintf("%s appeared", n), nil
		}
		delete(had, n)
	}
	for n := range had {
		return fmt.Sprintf("%s disappeared", n), nil
	}
	if fi, err := dir.Lstat(retain.ActivityName); err == nil && fi.ModTime().After(ri.LastActivity) {
		return "it was read", nil
	}
	if fi, err := dir.Lstat(retain.StepsDir); err == nil && !fi.ModTime().Equal(ri.StepsModTime) {
		return "a lookup ledger was written", nil
	}
	return "", nil
}

type pathErr struct {
	path string
	err  error
}

// removeDebris removes one run's debris under the run's exclusive lock,
// re-checking each file: still there, unchanged, still old, and (for
// content without a descriptor) still without one. The run directory (and
// its .steps) is opened without following a symlink, and each entry is
// removed relative to it, a symlink as itself.
func removeDebris(s *retain.Store, root *fsx.Dir, run retain.ID, ds []Debris, now time.Time, grace time.Duration) ([]Debris, *Skip, []pathErr) {
	l, err := s.LockRunExclusive(run)
	switch {
	case errors.Is(err, flock.ErrBusy):
		return nil, &Skip{Run: run, Rule: RuleDebris, Reason: SkipBusy,
			Message: fmt.Sprintf("a writer holds its lock; %d debris files left for the next gc", len(ds))}, nil
	case errors.Is(err, retain.ErrNotFound) || errors.Is(err, retain.ErrCollected):
		return nil, &Skip{Run: run, Rule: RuleDebris, Reason: SkipGone, Message: "the run disappeared since the plan was made"}, nil
	case err != nil:
		return nil, nil, []pathErr{{"", err}}
	}
	defer l.Unlock()
	runDir, err := root.OpenDir(filepath.Base(l.Dir))
	if err != nil {
		return nil, nil, []pathErr{{filepath.Base(l.Dir), err}}
	}
	defer runDir.Close()
	var out []Debris
	var errs []pathErr
	subdirs := map[string]*fsx.Dir{}
	defer func() {
		for _, d := range subdirs {
			d.Close()
		}
	}()
	for _, d := range ds {
		// d.Path is <run dir>/<name> or <run dir>/<subdir>/<name>.
		parts := strings.Split(d.Path, "/")[1:]
		dir := runDir
		if len(parts) == 2 {
			sub, ok := subdirs[parts[0]]
			if !ok {
				sub, err = runDir.OpenDir(parts[0])
				if err != nil {
					if !errors.Is(err, fs.ErrNotExist) {
						errs = append(errs, pathErr{d.Path, err})
					}
					continue
				}
				subdirs[parts[0]] = sub
			}
			dir = sub
		} else if len(parts) != 1 {
			errs = append(errs, pathErr{d.Path, fmt.Errorf("%s: not an entry of a run directory", d.Path)})
			continue
		}
		name := parts[len(parts)-1]
		fi, err := dir.Lstat(name)
		if err != nil {
			continue // gone already
		}
		if fi.ModTime().After(d.modTime) || now.Sub(fi.ModTime()) < grace {
			continue // touched since the plan: not ours to judge now
		}
		if d.descAbsent {
			if _, err := runDir.Lstat(retain.MetaName(d.value)); err == nil {
				continue // its descriptor arrived: a value now
			}
		}
		if err := dir.RemoveAll(name); err != nil {
			errs = append(errs, pathErr{d.Path, err})
			continue
		}
		out = append(out, d)
	}
	return out, nil, errs
}
