// Package gc collects a runs-dir: whole runs by idle time, total size and
// count, and the debris interrupted writes leave behind. It plans first and
// then executes the plan; a dry run is the plan alone, so what a dry run
// shows is what a real run does (minus what changed in between, which the
// execution re-checks and skips).
//
// Guarantees: a run whose lock a writer holds is never touched (gc takes
// the lock exclusively without waiting and skips the run when it cannot);
// nor is a run whose last activity is within the grace period. A run is
// renamed out of the store under its exclusive lock before its files are
// deleted, after a tombstone is written, so a reader sees the whole run or
// a `collected` error. Debris is removed only under the run's exclusive
// lock (which proves its writer is gone) and only once older than the
// grace period. Two gc processes never work on one runs-dir at once.
package gc

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/retval/retval/internal/flock"
	"github.com/retval/retval/pkg/retain"
)

// Defaults of SPEC §2 and §4.
const (
	DefaultMaxAge = 30 * 24 * time.Hour
	DefaultGrace  = time.Hour
	// DefaultTombstoneTTL is how long a tombstone outlives its run: after
	// that, a lookup in the run says unknown_reference instead of collected.
	DefaultTombstoneTTL = 30 * 24 * time.Hour
)

// CodeBusy is the error code when another gc holds the runs-dir's lock.
const CodeBusy retain.Code = "busy"

// gc's own names under the runs-dir's .retval directory.
const (
	lockName  = "gc.lock"
	trashName = "trash"
)

// The rules that select a run for removal.
const (
	RuleMaxAge   = "max-age"
	RuleMaxBytes = "max-bytes"
	RuleKeepRuns = "keep-runs"
	RuleDebris   = "debris" // a skip of a run's debris, not of the run
	RuleScan     = "scan"   // a run gc refused to look into, so no rule applied
)

// Reasons a run (or its debris) is skipped.
const (
	SkipBusy    = "busy"    // a writer holds the run's lock
	SkipActive  = "active"  // last activity within the grace period
	SkipChanged = "changed" // the run changed between plan and execution
	SkipGone    = "gone"    // the run disappeared between plan and execution
	SkipRefused = "refused" // not ours to touch: another user's directory, or not a plain directory
)

// Options is a gc policy. The zero value collects nothing by age, size or
// count and removes debris older than zero: set the fields (Defaults gives
// SPEC's defaults).
type Options struct {
	MaxAge   time.Duration // remove runs idle longer than this; 0 = no age rule
	MaxBytes int64         // then remove oldest runs until the store is within this; 0 = no cap
	KeepRuns int           // and until at most this many runs remain; 0 = no cap
	Grace    time.Duration // never touch what was active this recently
	// TombstoneTTL: tombstones older than this are removed (0 = DefaultTombstoneTTL).
	TombstoneTTL time.Duration
	DryRun       bool
	// Now is the clock (nil = time.Now).
	Now func() time.Time
	// Progress, when set, is called as work is done: phase "scan" while
	// runs are scanned, "collect" while the plan is executed.
	Progress func(phase string, done, total int)
	// Workers is how many runs are scanned or removed at once (0 = 4).
	Workers int
}

// Defaults returns SPEC's policy: max-age 30d, grace 1h, no caps.
func Defaults() Options { return Options{MaxAge: DefaultMaxAge, Grace: DefaultGrace} }

func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o *Options) progress(phase string, done, total int) {
	if o.Progress != nil {
		o.Progress(phase, done, total)
	}
}

func (o *Options) workers() int {
	if o.Workers > 0 {
		return o.Workers
	}
	return 4
}

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
	Path    string `json:"path"`
	Kind    string `json:"kind"` // temp, orphan or stray
	Bytes   int64  `json:"bytes"`
	modTime time.Time
	// value is the value an orphan is named for; descAbsent says it had no
	// descriptor when planned (else it is a content file its descriptor
	// does not name).
	value      retain.ID
	descAbsent bool
}

// Trash is what an interrupted gc left in .retval/trash.
type Trash struct {
	Path  string `json:"path"` // relative to the runs-dir
	Bytes int64  `json:"bytes"`
}

// Expired is a tombstone old enough to be dropped.
type Expired struct {
	Run       retain.ID `json:"run"`
	Collected time.Time `json:"collected"`
}

// Failure is an action that could not be done.
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
}

// Report is what gc did (or, for a dry run, would do).
type Report struct {
	DryRun     bool      `json:"dry_run"`
	Now        time.Time `json:"now"`
	Runs       int       `json:"runs"`  // runs in the store before
	Bytes      int64     `json:"bytes"` // their apparent size
	Removed    []Removal `json:"removed"`
	Skipped    []Skip    `json:"skipped"`
	Debris     []Debris  `json:"debris"`
	Trash      []Trash   `json:"trash"`
	Tombstones []Expired `json:"tombstones_expired"`
	Failed     []Failure `json:"failed"`
	BytesFreed int64     `json:"bytes_freed"`
	RunsKept   int       `json:"runs_kept"`
	BytesKept  int64     `json:"bytes_kept"`
}

// Collect locks the runs-dir against other gcs, plans, and executes the
// plan (unless o.DryRun). The report is returned even with an error, which
// says what could not be done.
func Collect(s *retain.Store, o Options) (*Report, error) {
	l, err := LockStore(s, !o.DryRun)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	p, err := MakePlan(s, o)
	if err != nil {
		return nil, err
	}
	if o.DryRun {
		return p.Report(), nil
	}
	return Execute(s, p, o)
}

// StoreLock is gc's hold on a runs-dir.
type StoreLock struct{ f *os.File }

// Unlock lets the next gc in.
func (l *StoreLock) Unlock() {
	if l != nil && l.f != nil {
		l.f.Close()
	}
}

// LockStore takes the runs-dir's gc lock (.retval/gc.lock) exclusively
// without waiting; another gc holding it is a CodeBusy error. With create
// unset nothing is created: a store where no gc ever ran is not locked
// (that is how a dry run changes nothing).
func LockStore(s *retain.Store, create bool) (*StoreLock, error) {
	if fi, err := os.Stat(s.Dir); err != nil || !fi.IsDir() {
		return nil, retain.Errorf(retain.CodeIO, "runs-dir %s does not exist (check --runs-dir or RETVAL_RUNS_DIR)", s.Dir)
	}
	dir := filepath.Join(s.Dir, retain.StoreDir)
	flags := os.O_RDONLY
	if create {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		flags = os.O_RDWR | os.O_CREATE
	}
	f, err := os.OpenFile(filepath.Join(dir, lockName), flags|syscall.O_NOFOLLOW, 0o600)
	if !create && errors.Is(err, fs.ErrNotExist) {
		return &StoreLock{}, nil
	}
	if err != nil {
		return nil, err
	}
	if err := flock.TryExclusive(f); err != nil {
		f.Close()
		if errors.Is(err, flock.ErrBusy) {
			return nil, retain.Errorf(CodeBusy, "another gc is running on %s; try again when it is done", s.Dir)
		}
		return nil, err
	}
	return &StoreLock{f: f}, nil
}

// MakePlan scans the store and decides what to remove. It changes nothing
// (it tries run locks, without waiting, to see which runs are busy).
func MakePlan(s *retain.Store, o Options) (*Plan, error) {
	now := o.now()
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
	if err := p.planStoreDir(s, &o); err != nil {
		return nil, err
	}

	busy := map[retain.ID]bool{}
	isBusy := func(ri *retain.RunInfo) bool {
		b, ok := busy[ri.Run]
		if !ok {
			// A lock we cannot even try counts as busy: never guess.
			var err error
			b, err = s.RunBusy(ri.Run)
			b = b || err != nil
			busy[ri.Run] = b
		}
		return b
	}
	// Debris per run, by age alone; busy runs keep theirs for now.
	debris := map[retain.ID][]Debris{}
	for _, ri := range infos {
		descs := map[retain.ID]bool{}
		for _, e := range ri.Entries {
			if e.Kind == retain.KindValue {
				descs[e.Value] = true
			}
		}
		for _, e := range ri.Entries {
			if e.Kind.Debris() && now.Sub(e.ModTime) >= o.Grace {
				debris[ri.Run] = append(debris[ri.Run], Debris{Run: ri.Run, Path: filepath.Join(filepath.Base(ri.Dir), e.Name),
					Kind: e.Kind.String(), Bytes: e.Bytes, modTime: e.ModTime, value: e.Value, descAbsent: e.Value != "" && !descs[e.Value]})
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
		if idle := now.Sub(ri.LastActivity); idle < o.Grace {
			p.Skip = append(p.Skip, Skip{Run: ri.Run, Rule: rule, Reason: SkipActive,
				Message: fmt.Sprintf("last active %s ago, within the grace period (%s)", Age(idle), Age(o.Grace))})
			return false
		}
		if isBusy(ri) {
			p.Skip = append(p.Skip, Skip{Run: ri.Run, Rule: rule, Reason: SkipBusy, Message: "a writer holds its lock"})
			return false
		}
		p.Remove = append(p.Remove, Removal{Run: ri.Run, Rule: rule, Values: ri.Values, Bytes: ri.Bytes, LastActivity: ri.LastActivity, info: ri})
		removed[ri.Run] = true
		return true
	}
	if o.MaxAge > 0 {
		for _, ri := range order {
			if now.Sub(ri.LastActivity) > o.MaxAge {
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
			p.Skip = append(p.Skip, Skip{Run: ri.Run, Rule: RuleDebris, Reason: SkipBusy,
				Message: fmt.Sprintf("a writer holds its lock; %d debris files left for the next gc", len(ds))})
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
		ri, err := s.ScanRun(ids[i])
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
// its temporary tombstone files, and expired tombstones.
func (p *Plan) planStoreDir(s *retain.Store, o *Options) error {
	trash := filepath.Join(s.Dir, retain.StoreDir, trashName)
	ents, err := os.ReadDir(trash)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, e := range ents {
		rel := filepath.Join(retain.StoreDir, trashName, e.Name())
		p.Trash = append(p.Trash, Trash{Path: rel, Bytes: duBytes(filepath.Join(s.Dir, rel))})
	}
	ents, err = os.ReadDir(s.TombstoneDir())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	ttl := o.TombstoneTTL
	if ttl <= 0 {
		ttl = DefaultTombstoneTTL
	}
	for _, e := range ents {
		name := e.Name()
		if retain.IsTemp(name) {
			// Only gc writes here, and we hold gc's lock: its writer is gone.
			rel, err := filepath.Rel(s.Dir, filepath.Join(s.TombstoneDir(), name))
			if err != nil {
				return err
			}
			p.Debris = append(p.Debris, Debris{Path: rel, Kind: retain.KindTemp.String(), Bytes: duBytes(filepath.Join(s.Dir, rel))})
			continue
		}
		run, ok := strings.CutSuffix(name, ".json")
		if !ok || !retain.IsClean(run) {
			continue
		}
		t, ok := s.ReadTombstone(retain.ID(run))
		if ok && p.Now.Sub(t.Collected) >= ttl {
			p.Tombstones = append(p.Tombstones, Expired{Run: t.Run, Collected: t.Collected})
		}
	}
	return nil
}

// Report is the plan as a report: what a dry run prints.
func (p *Plan) Report() *Report {
	r := &Report{DryRun: true, Now: p.Now, Runs: p.Runs, Bytes: p.Bytes,
		Removed: slices.Clone(p.Remove), Skipped: slices.Clone(p.Skip), Debris: slices.Clone(p.Debris),
		Trash: slices.Clone(p.Trash), Tombstones: slices.Clone(p.Tombstones)}
	r.tally()
	return r
}

// tally fills the totals from the lists and makes empty lists [] in JSON.
func (r *Report) tally() {
	r.Removed = nonNil(r.Removed)
	r.Skipped = nonNil(r.Skipped)
	r.Debris = nonNil(r.Debris)
	r.Trash = nonNil(r.Trash)
	r.Tombstones = nonNil(r.Tombstones)
	r.Failed = nonNil(r.Failed)
	r.BytesFreed = 0
	for _, x := range r.Removed {
		r.BytesFreed += x.Bytes
	}
	for _, x := range r.Debris {
		r.BytesFreed += x.Bytes
	}
	for _, x := range r.Trash {
		r.BytesFreed += x.Bytes
	}
	r.RunsKept = r.Runs - len(r.Removed)
	r.BytesKept = r.Bytes
	for _, x := range r.Removed {
		r.BytesKept -= x.Bytes
	}
	for _, x := range r.Debris {
		if x.Run != "" {
			r.BytesKept -= x.Bytes
		}
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Execute carries out a plan: trash left by an interrupted gc first, then
// expired tombstones, then runs (in parallel), then debris. Each step is
// re-checked under the run's exclusive lock: a run that became busy or
// changed since the plan is skipped and reported, never removed. The caller
// holds the store's gc lock (Collect does). The error, when not nil, says
// how many actions failed; the report lists them.
func Execute(s *retain.Store, p *Plan, o Options) (*Report, error) {
	r := &Report{Now: p.Now, Runs: p.Runs, Bytes: p.Bytes, Skipped: slices.Clone(p.Skip)}
	total := len(p.Trash) + len(p.Tombstones) + len(p.Remove) + len(p.Debris)
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
		if err := os.RemoveAll(filepath.Join(s.Dir, t.Path)); err != nil {
			fail("", t.Path, err)
		} else {
			r.Trash = append(r.Trash, t)
		}
		step(1)
	}
	for _, t := range p.Tombstones {
		s.RemoveTombstone(t.Run)
		if _, still := s.ReadTombstone(t.Run); still {
			fail(t.Run, "", fmt.Errorf("could not remove the tombstone of run %s", t.Run))
		} else {
			r.Tombstones = append(r.Tombstones, t)
		}
		step(1)
	}

	trash := filepath.Join(s.Dir, retain.StoreDir, trashName)
	if len(p.Remove) > 0 {
		if err := os.MkdirAll(trash, 0o700); err != nil {
			return nil, err
		}
	}
	results := make([]*Skip, len(p.Remove))
	okRemoved := make([]bool, len(p.Remove))
	parallel(len(p.Remove), o.workers(), func(i int) {
		rm := &p.Remove[i]
		skip, err := removeRun(s, rm, trash, p.Now)
		switch {
		case err != nil:
			fail(rm.Run, "", err)
		case skip != nil:
			results[i] = skip
		default:
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

	// Debris, one run at a time under its lock; the store's own under ours.
	byRun := map[retain.ID][]Debris{}
	var runs []retain.ID
	for _, d := range p.Debris {
		if d.Run == "" {
			if err := os.RemoveAll(filepath.Join(s.Dir, d.Path)); err != nil {
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
	parallel(len(runs), o.workers(), func(i int) {
		ds := byRun[runs[i]]
		out, skip, errs := removeDebris(s, runs[i], ds, p.Now, o.Grace)
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
	if len(r.Failed) > 0 {
		return r, retain.Errorf(retain.CodeIO, "%d of %d actions failed (first: %s)", len(r.Failed), total, r.Failed[0].Error)
	}
	return r, nil
}

// removeRun collects one run: under its exclusive lock, re-checks that it
// has not changed since the scan, writes its tombstone, renames it into the
// trash, lets the lock go and deletes the files.
func removeRun(s *retain.Store, rm *Removal, trash string, now time.Time) (*Skip, error) {
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
	if changed, err := runChanged(rm.info); err != nil {
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
	dst, err := trashPath(trash, rm.Run)
	if err == nil {
		err = os.Rename(rm.info.Dir, dst)
	}
	if err != nil {
		if !late {
			s.RemoveTombstone(rm.Run)
		}
		return nil, fmt.Errorf("moving run %s out of the store: %w (run left in place)", rm.Run, err)
	}
	locked = false
	l.Unlock()
	if err := os.RemoveAll(dst); err != nil {
		return nil, fmt.Errorf("run %s is collected, but deleting its files failed: %w (the next gc finishes it)", rm.Run, err)
	}
	if late {
		if err := s.WriteTombstone(tomb); err != nil {
			return nil, fmt.Errorf("run %s is collected, but its tombstone could not be written: %w (lookups in it say unknown_reference)", rm.Run, err)
		}
	}
	return nil, nil
}

func trashPath(trash string, run retain.ID) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return filepath.Join(trash, string(run)+".values."+hex.EncodeToString(b[:])), nil
}

// runChanged tells, under the run's exclusive lock, whether the run gained
// or lost entries, was read, or had a ledger written since it was scanned:
// then the plan's reason to remove it may no longer hold.
func runChanged(ri *retain.RunInfo) (string, error) {
	f, err := os.Open(ri.Dir)
	if err != nil {
		return "", err
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return "", err
	}
	had := map[string]bool{}
	for _, e := range ri.Entries {
		if !strings.Contains(e.Name, "/") {
			had[e.Name] = true
		}
	}
	for _, n := range names {
		if !had[n] && n != retain.LockName { // the lock may be ours, just made
			return fmt.Sprintf("%s appeared", n), nil
		}
		delete(had, n)
	}
	for n := range had {
		return fmt.Sprintf("%s disappeared", n), nil
	}
	if fi, err := os.Lstat(filepath.Join(ri.Dir, retain.ActivityName)); err == nil && fi.ModTime().After(ri.LastActivity) {
		return "it was read", nil
	}
	if fi, err := os.Lstat(filepath.Join(ri.Dir, retain.StepsDir)); err == nil && !fi.ModTime().Equal(ri.StepsModTime) {
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
// content without a descriptor) still without one.
func removeDebris(s *retain.Store, run retain.ID, ds []Debris, now time.Time, grace time.Duration) ([]Debris, *Skip, []pathErr) {
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
	var out []Debris
	var errs []pathErr
	for _, d := range ds {
		p := filepath.Join(filepath.Dir(l.Dir), d.Path)
		fi, err := os.Lstat(p)
		if err != nil {
			continue // gone already
		}
		if fi.ModTime().After(d.modTime) || now.Sub(fi.ModTime()) < grace {
			continue // touched since the plan: not ours to judge now
		}
		if d.descAbsent {
			if _, err := os.Lstat(filepath.Join(l.Dir, retain.MetaName(d.value))); err == nil {
				continue // its descriptor arrived: a value now
			}
		}
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, pathErr{d.Path, err})
			continue
		}
		out = append(out, d)
	}
	return out, nil, errs
}

// parallel runs f(0..n-1) on up to w goroutines.
func parallel(n, w int, f func(int)) {
	if n == 0 {
		return
	}
	w = min(w, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range w {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// duBytes is the apparent size of a file or tree, as du -sb counts it.
func duBytes(path string) int64 {
	var n int64
	filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// Age renders a duration the way gc's messages do: 40d, 3d 4h, 5h, 12m, 30s.
func Age(d time.Duration) string {
	switch {
	case d >= 10*24*time.Hour:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d >= 24*time.Hour:
		days, hours := d/(24*time.Hour), (d%(24*time.Hour))/time.Hour
		if hours == 0 {
			return fmt.Sprintf("%dd", days)
		}
		return fmt.Sprintf("%dd %dh", days, hours)
	case d >= time.Hour:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d >= time.Minute:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return fmt.Sprintf("%ds", d/time.Second)
}
