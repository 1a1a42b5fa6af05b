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
//
// Nothing outside the runs-dir is ever touched: every directory under it
// (the runs-dir's own .retval, its trash and tombstones, run directories
// and the directories in them) is opened relative to its parent's
// descriptor without following a symlink, a symlink found anywhere is
// removed as itself and never followed, and one in place of .retval,
// .retval/trash or .retval/tombstones is refused and reported.
//
// The mechanics (locks, trash, tombstones, collecting a run and its
// debris, each re-checked under the run's lock) are pkg/retain's
// operations; gc is the policy: which runs go, by which rule, in what
// order, and the report (plan.go decides, execute.go carries it out,
// report.go tallies).
package gc

import (
	"fmt"
	"sync"
	"time"

	"github.com/retval/retval/pkg/retain"
)

// Defaults of SPEC §2 and §4.
const (
	DefaultMaxAge = 30 * 24 * time.Hour
	DefaultGrace  = retain.DefaultGrace
	// DefaultTombstoneTTL is how long a tombstone outlives its run: after
	// that, a lookup in the run says unknown_reference instead of collected.
	DefaultTombstoneTTL = 30 * 24 * time.Hour
)

// Unlimited, in a field of Options, is SPEC's 0: for MaxAge no age rule,
// for Grace no grace period, for TombstoneTTL tombstones that never
// expire, for MaxBytes and KeepRuns no cap. Any negative value means the
// same. (A field left 0 takes its default.)
const Unlimited = retain.Unlimited

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
	SkipRefused = "refused" // not ours to touch: another user's directory, not a plain directory, or no safe trash or tombstones
)

// Options is a gc policy. The zero value is SPEC's: runs idle longer than
// 30 days go, nothing active within the last hour is touched, no size or
// count cap, tombstones kept 30 days. Unlimited turns a rule off.
type Options struct {
	// MaxAge: remove runs idle longer than this (0: DefaultMaxAge;
	// Unlimited: no age rule).
	MaxAge time.Duration
	// MaxBytes: then remove the oldest runs until the store is within this
	// (0 or Unlimited: no cap).
	MaxBytes int64
	// KeepRuns: and until at most this many runs remain (0 or Unlimited:
	// no cap).
	KeepRuns int
	// Grace: never touch what was active this recently (0: DefaultGrace;
	// Unlimited: no grace period).
	Grace time.Duration
	// TombstoneTTL: tombstones older than this are removed (0:
	// DefaultTombstoneTTL; Unlimited: kept for ever).
	TombstoneTTL time.Duration
	DryRun       bool
	// Progress, when set, is called as work is done: phase "scan" while
	// runs are scanned, "collect" while the plan is executed.
	Progress func(phase string, done, total int)
	// Workers is how many runs are scanned or removed at once (0 = 4).
	Workers int
}

// Defaults returns SPEC's policy: max-age 30d, grace 1h, no caps. It is
// the zero Options with the defaults written out.
func Defaults() Options { return Options{MaxAge: DefaultMaxAge, Grace: DefaultGrace} }

// maxAge is the age rule's bound, 0 for none.
func (o *Options) maxAge() time.Duration { return retain.Bound(o.MaxAge, DefaultMaxAge) }

// grace is the grace period, 0 for none.
func (o *Options) grace() time.Duration { return retain.Bound(o.Grace, DefaultGrace) }

// tombstoneTTL is how long tombstones are kept, 0 for ever.
func (o *Options) tombstoneTTL() time.Duration {
	return retain.Bound(o.TombstoneTTL, DefaultTombstoneTTL)
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

// Collect locks the runs-dir against other gcs, plans, and executes the
// plan (unless o.DryRun). The report is returned even with an error, which
// says what could not be done. A runs-dir that does not exist yet is an
// empty store: an empty report, no error, and nothing is created.
func Collect(s *retain.Store, o Options) (*Report, error) {
	if missing, err := s.RunsDirMissing(); err != nil {
		return nil, err
	} else if missing {
		r := (&Plan{Now: s.Clock()}).Report()
		r.DryRun, r.NoRunsDir = o.DryRun, true
		return r, nil
	}
	l, err := s.LockCollector(!o.DryRun)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	p, err := MakePlan(s, o)
	if err != nil {
		return nil, err
	}
	if o.DryRun {
		r := p.Report()
		return r, r.err(len(r.Failed))
	}
	return Execute(s, p, o)
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
