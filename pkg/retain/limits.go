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

// Limits are the configurable bounds of SPEC §4. Zero means unlimited, except
// where a field's comment says otherwise.
type Limits struct {
	Threshold      int64 // retain values larger than this; 0 retains everything
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

// DefaultLimits returns the defaults of SPEC §4.
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
		Grace:          time.Hour,
	}
}
