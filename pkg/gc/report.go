package gc

import (
	"slices"
	"time"

	"github.com/retval/retval/pkg/retain"
)

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
	// NoRunsDir: the runs-dir does not exist yet (nothing was ever
	// retained there), so there was nothing to collect.
	NoRunsDir bool `json:"no_runs_dir,omitempty"`
}

// err is the error of a report with failures, nil without.
func (r *Report) err(total int) error {
	if len(r.Failed) == 0 {
		return nil
	}
	if len(r.Failed) == 1 {
		return retain.Errorf(retain.CodeIO, "%s", r.Failed[0].Error)
	}
	return retain.Errorf(retain.CodeIO, "%d of %d actions failed (first: %s)", len(r.Failed), total, r.Failed[0].Error)
}

// Report is the plan as a report: what a dry run prints.
func (p *Plan) Report() *Report {
	r := &Report{DryRun: true, Now: p.Now, Runs: p.Runs, Bytes: p.Bytes,
		Removed: slices.Clone(p.Remove), Skipped: slices.Clone(p.Skip), Debris: slices.Clone(p.Debris),
		Trash: slices.Clone(p.Trash), Tombstones: slices.Clone(p.Tombstones), Failed: slices.Clone(p.Refused)}
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
