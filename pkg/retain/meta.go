package retain

import (
	"fmt"

	"github.com/retval/retval/internal/xxh3"
)

// Meta is what a caller says about a result besides its bytes.
type Meta struct {
	Tool         string
	Partial      bool   // the producer kept only a tail
	OmittedBytes *int64 // bytes the producer discarded, when known
	ExitCode     *int
	TimedOut     bool
	// Stopped: the producer was stopped at max-value-size; the value is
	// the head of its output (see Descriptor.Stopped).
	Stopped bool
	// KeptTail: Partial, and the tail was kept by retval (exec --tail),
	// not by the producer (see Descriptor.KeptTail).
	KeptTail bool
	// Stderr is the value holding the producer's stderr, when it was
	// retained apart.
	Stderr ID
}

// metaOf is what d says about its value besides its bytes.
func metaOf(d *Descriptor) Meta {
	return Meta{Tool: d.Tool, Partial: !d.Complete && !d.Stopped, OmittedBytes: d.OmittedBytes, ExitCode: d.ExitCode, TimedOut: d.TimedOut, Stopped: d.Stopped, KeptTail: d.KeptTail, Stderr: d.Stderr}
}

// setCallID keeps in d the call id, or, for one longer than MaxCallIDBytes, its
// first bytes (cut at a UTF-8 boundary) and the XXH3 of the whole, which
// is what its value id was made from.
func setCallID(d *Descriptor, call string) {
	d.CallID = truncateUTF8(call, MaxCallIDBytes)
	if len(call) > MaxCallIDBytes {
		d.CallIDXXH3 = fmt.Sprintf("%016x", xxh3.HashString(call))
	}
}

// truncateUTF8 returns at most n bytes of s, not splitting a UTF-8
// sequence.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:runeStartBefore([]byte(s), n)]
}
