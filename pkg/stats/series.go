package stats

import (
	"errors"
	"slices"
	"time"

	"github.com/retval/retval/pkg/retain"
)

// Point is the ledger of the records in one span of time, and the sums of
// every record up to its end.
type Point struct {
	// Time is where the span starts; the span is Step long.
	Time time.Time `json:"time"`
	Step string    `json:"step"`
	In   Ledger    `json:"in"`
	UpTo Ledger    `json:"up_to"`
}

// Series sums the same read logs as Compute (o.By is ignored) into at
// most maxPoints spans of time, oldest first: the figures of Compute,
// drawn over time. The spans are a power-of-two number of seconds, as
// few as let the records fit, found in one streaming pass whatever the
// size of the logs; the last point's UpTo is Compute's Total.
func Series(o Options, maxPoints int) ([]Point, error) {
	maxPoints = max(maxPoints, 2)
	o.By = ByNone
	overhead := o.CallOverhead
	switch {
	case overhead == 0:
		overhead = DefaultCallOverhead
	case overhead < 0:
		overhead = 0
	}
	if o.Store == nil {
		return nil, retain.Errorf(retain.CodeUsage, "stats: no store")
	}
	var from time.Time
	if o.Since > 0 {
		from = o.Store.Clock().Add(-o.Since)
	}
	runs, err := runsOf(o)
	if err != nil {
		return nil, err
	}
	step := int64(1) // seconds
	spans := map[int64]*Ledger{}
	add := func(r *retain.Read) {
		if !from.IsZero() && r.Time.Before(from) {
			return
		}
		k := floorDiv(r.Time.Unix(), step)
		l := spans[k]
		if l == nil {
			for len(spans) >= maxPoints {
				step *= 2
				merged := make(map[int64]*Ledger, len(spans)/2+1)
				for k, l := range spans {
					if m := merged[floorDiv(k, 2)]; m != nil {
						m.merge(l)
					} else {
						merged[floorDiv(k, 2)] = l
					}
				}
				spans = merged
				k = floorDiv(r.Time.Unix(), step)
				l = spans[k]
				if l != nil {
					break
				}
			}
			if l == nil {
				l = &Ledger{}
				spans[k] = l
			}
		}
		l.add(r)
	}
	for _, run := range runs {
		_, err := o.Store.ScanReads(run, add)
		if o.All && (errors.Is(err, retain.ErrNotFound) || errors.Is(err, retain.ErrCollected) || errors.Is(err, retain.ErrCorrupt)) {
			continue // as Compute: collected meanwhile, or refused
		}
		if err != nil {
			return nil, err
		}
	}
	keys := make([]int64, 0, len(spans))
	for k := range spans {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]Point, 0, len(keys))
	var sum Ledger
	stepText := (time.Duration(step) * time.Second).String()
	for _, k := range keys {
		l := spans[k]
		sum.merge(l)
		p := Point{Time: time.Unix(k*step, 0).UTC(), Step: stepText, In: *l, UpTo: sum}
		p.In.finish(overhead)
		p.UpTo.finish(overhead)
		out = append(out, p)
	}
	return out, nil
}

// runsOf are the runs o sums.
func runsOf(o Options) ([]retain.ID, error) {
	if o.All {
		return o.Store.RunIDs()
	}
	id, err := retain.Sanitize(o.Run)
	if err != nil {
		return nil, retain.Errorf(retain.CodeUsage, "run id: %v", err)
	}
	return []retain.ID{id}, nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// merge adds the counts of m to l (the derived figures are left to
// finish).
func (l *Ledger) merge(m *Ledger) {
	l.Values += m.Values
	l.RetainedBytes += m.RetainedBytes
	l.StubBytes += m.StubBytes
	l.Calls += m.Calls
	l.Lookups += m.Lookups
	l.LookupBytes += m.LookupBytes
	l.Failures += m.Failures
	l.Refused += m.Refused
	l.Verbatim += m.Verbatim
	l.VerbatimBytes += m.VerbatimBytes
	l.Previews += m.Previews
	l.PreviewSize += m.PreviewSize
	l.PreviewBytes += m.PreviewBytes
	l.Compositions += m.Compositions
	l.ComposedBytes += m.ComposedBytes
	l.References += m.References
	l.ReferenceBytes += m.ReferenceBytes
	l.ReferencedBytes += m.ReferencedBytes
	l.OutputSaved += m.OutputSaved
}
