package retain

import "time"

// Policy decides what retain does when a run is at capacity.
type Policy string

const (
	// PolicyLegacy prints a bounded preview marked as having no reference.
	PolicyLegacy Policy = "legacy"
	// PolicyBounded prints header-only stubs and fails at capacity.
	PolicyBounded Policy = "bounded"
)

// Unlimited, in a field of Limits (or of any options struct of retval's
// packages), is SPEC §4's 0: no limit. For Threshold it means every result
// is retained; for PreviewBytes, no excerpts (the header and read-more
// line only); for Grace, no grace period. A field left 0 takes its
// default, so the zero Limits are SPEC's defaults.
const Unlimited = -1

// Limits are the configurable bounds of SPEC §4. A zero field means the
// default of DefaultLimits; Unlimited means no limit.
type Limits struct {
	Threshold      int64 // retain values larger than this
	PreviewBytes   int64 // head + tail excerpt budget of a stub
	PeekLines      int64
	PeekBytes      int64
	MaxValueSize   int64
	MaxRunBytes    int64
	MaxRunValues   int64
	MaxLookups     int64
	MaxLookupBytes int64
	MaxStepBytes   int64
	MaxExpandBytes int64
	Grace          time.Duration
}

// DefaultGrace is SPEC's grace period: gc never touches what was active
// this recently, and verify reports no younger file as debris.
const DefaultGrace = time.Hour

// DefaultLimits returns the defaults of SPEC §4. They are the one set of
// defaults: settings (flags, environment, config file) render theirs from
// these, and gc's grace is DefaultGrace.
func DefaultLimits() Limits {
	return Limits{
		Threshold:      20 << 10,
		PreviewBytes:   1024,
		PeekLines:      400,
		PeekBytes:      16 << 10,
		MaxValueSize:   16 << 20,
		MaxRunBytes:    64 << 20,
		MaxRunValues:   1024,
		MaxLookups:     8,
		MaxLookupBytes: 8 << 10,
		MaxStepBytes:   64 << 10,
		MaxExpandBytes: 16 << 20,
		Grace:          DefaultGrace,
	}
}

// Effective is Limits as they are enforced: every field holds its
// effective bound, and 0 means no limit (SPEC's reading). It is a type of
// its own so that it is never passed back where Limits are expected, where
// a 0 would mean the default again.
type Effective Limits

// Effective returns the bounds l sets: each 0 field replaced by its
// default, each Unlimited (any negative value) by 0.
func (l Limits) Effective() Effective {
	d := DefaultLimits()
	pick := Bound[int64]
	e := Effective{
		Threshold:      pick(l.Threshold, d.Threshold),
		PreviewBytes:   pick(l.PreviewBytes, d.PreviewBytes),
		PeekLines:      pick(l.PeekLines, d.PeekLines),
		PeekBytes:      pick(l.PeekBytes, d.PeekBytes),
		MaxValueSize:   pick(l.MaxValueSize, d.MaxValueSize),
		MaxRunBytes:    pick(l.MaxRunBytes, d.MaxRunBytes),
		MaxRunValues:   pick(l.MaxRunValues, d.MaxRunValues),
		MaxLookups:     pick(l.MaxLookups, d.MaxLookups),
		MaxLookupBytes: pick(l.MaxLookupBytes, d.MaxLookupBytes),
		MaxStepBytes:   pick(l.MaxStepBytes, d.MaxStepBytes),
		MaxExpandBytes: pick(l.MaxExpandBytes, d.MaxExpandBytes),
		Grace:          time.Duration(pick(int64(l.Grace), int64(d.Grace))),
	}
	return e
}

// Bound is the bound a field of an options struct sets, under the
// convention of Limits: def for 0, 0 (no limit) for Unlimited or any
// negative value, v otherwise.
func Bound[T ~int64](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// Setting returns the value of a Limits field for a bound read from a
// user's setting, where 0 means no limit: Unlimited for 0, n otherwise.
func Setting(n int64) int64 {
	if n == 0 {
		return Unlimited
	}
	return n
}
