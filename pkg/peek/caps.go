package peek

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/retval/retval/internal/safetext"
	"github.com/retval/retval/pkg/retain"
)

// Caps bound the output of one peek and say how it is shown. The zero Caps
// are the defaults of SPEC §4 (DefaultCaps): a field left 0 takes its
// default, and retain.Unlimited (any negative value) means no cap.
type Caps struct {
	// Lines is the most lines of the value shown (default 400).
	Lines int64
	// Bytes is the most bytes of output, gutters and the continuation line
	// included (default 16 KiB).
	Bytes int64
	// Escape shows the value's bytes as safetext escapes them — control
	// bytes other than tab and newline, C1 controls, bidi controls and
	// invalid UTF-8 — as on a terminal; gutters and continuation lines are
	// written as they are. Bytes then counts the escaped text, so the
	// output stays within the cap as shown.
	Escape bool

	// threshold is the retain threshold CapsFor kept Bytes below (0: none
	// known), and lowered says it lowered Bytes to fit: then only a
	// higher threshold gives a peek more room.
	threshold int64
	lowered   bool
}

// DefaultCaps are the caps of SPEC §4: 400 lines, 16 KiB.
var DefaultCaps = Caps{Lines: 400, Bytes: 16 << 10}

// NoCaps lifts both caps: a peek shows all it is asked for. Write... then
// streams the output, whatever its size.
var NoCaps = Caps{Lines: retain.Unlimited, Bytes: retain.Unlimited}

// capped is Caps as they are enforced: defaults applied, 0 meaning no cap.
// It is a type of its own so that it never goes back where Caps are
// expected, where a 0 would mean the default again.
type capped struct {
	Lines, Bytes int64
	Escape       bool
	threshold    int64
	lowered      bool
}

func (c Caps) effective() capped {
	return capped{Lines: retain.Bound(c.Lines, DefaultCaps.Lines), Bytes: retain.Bound(c.Bytes, DefaultCaps.Bytes), Escape: c.Escape, threshold: c.threshold, lowered: c.lowered}
}

// shown returns how many bytes p takes in the output: len(p), or its
// escaped length.
func (c capped) shown(p []byte) int64 {
	if c.Escape {
		return int64(safetext.Len(p))
	}
	return int64(len(p))
}

// ToEnd as the last line of Lines asks for as many lines from the first as
// the caps allow; it is what a peek without a selector reads.
const ToEnd int64 = math.MaxInt64

// CapsFor returns the caps of a peek under limits l. The byte cap always
// stays at least one byte below the retain threshold (when that is not
// 0), so a peek's output is never itself retained: a peek-bytes that was
// not set explicitly is lowered to threshold-1, and one set explicitly
// (flag, environment or config file) at or above the threshold — or 0,
// unlimited — is refused with a usage error. A threshold of 1 byte leaves
// no room for any output and is refused too.
func CapsFor(limits retain.Limits, bytesExplicit bool) (Caps, error) {
	l := limits.Effective()
	c := capped{Lines: l.PeekLines, Bytes: l.PeekBytes, threshold: l.Threshold}
	if l.Threshold > 0 && (c.Bytes == 0 || c.Bytes >= l.Threshold) {
		if bytesExplicit {
			what := plural(c.Bytes, "byte")
			if c.Bytes == 0 {
				what = "0 (unlimited)"
			}
			return Caps{}, retain.Errorf(retain.CodeUsage,
				"peek-bytes %s is not below the retain threshold of %s, so a peek could itself be retained; use a peek-bytes below the threshold, or raise the threshold", what, plural(l.Threshold, "byte"))
		}
		if l.Threshold == 1 {
			return Caps{}, retain.Errorf(retain.CodeUsage,
				"the retain threshold of 1 byte leaves no room for a peek, whose output must stay below it; raise the threshold, or set it to 0 for no bound")
		}
		c.Bytes, c.lowered = l.Threshold-1, true
	}
	return c.caps(), nil
}

// caps turns enforced caps back into Caps, 0 becoming Unlimited.
func (c capped) caps() Caps {
	un := func(v int64) int64 {
		if v == 0 {
			return retain.Unlimited
		}
		return v
	}
	return Caps{Lines: un(c.Lines), Bytes: un(c.Bytes), Escape: c.Escape, threshold: c.threshold, lowered: c.lowered}
}

// appendGutter appends the read_file gutter of line n, "n: ".
func appendGutter(b []byte, n int64) []byte { return append(strconv.AppendInt(b, n, 10), ':', ' ') }

// gutterLen is the width of the gutter appendGutter writes for line n.
func gutterLen(n int64) int64 { return int64(len(strconv.FormatInt(n, 10))) + 2 }

// worstNumber is a number as wide as any offset, line number or count of a
// value of the given size can be: every such number is at most the size.
func worstNumber(size int64) int64 {
	d := len(strconv.FormatInt(max(size, 1), 10))
	w, _ := strconv.ParseInt(strings.Repeat("9", d), 10, 64)
	return w
}

// tooSmall is the error for a byte cap that cannot hold the continuation
// line and some progress.
// It says what can help: a cap the retain threshold lowered grows only
// with the threshold (raising peek-bytes cannot pass it).
func tooSmall(c capped, need int64) error {
	const what = "too small to show this value with its continuation line"
	switch {
	case c.lowered:
		return retain.Errorf(retain.CodeUsage,
			"the retain threshold of %s caps a peek's output at %s (a peek stays below it, so it is never retained itself), %s (it needs at least %d); raise the threshold above %d, or set it to 0 for no bound",
			plural(c.threshold, "byte"), plural(c.Bytes, "byte"), what, need, need)
	case c.threshold > 0 && need >= c.threshold:
		return retain.Errorf(retain.CodeUsage,
			"the peek output cap of %s is %s (it needs at least %d); raise peek-bytes to at least %d and the retain threshold (%s) above it",
			plural(c.Bytes, "byte"), what, need, need, plural(c.threshold, "byte"))
	}
	return retain.Errorf(retain.CodeUsage,
		"the peek output cap of %s is %s (it needs at least %d); raise peek-bytes to at least %d", plural(c.Bytes, "byte"), what, need, need)
}

// minProgress is the least room for content a cut needs: one whole UTF-8
// sequence, so every continuation moves forward. Escaped, the widest
// sequence shown is 6 bytes (\u009b; an invalid byte is 4, \xff).
const minProgress = utf8.UTFMax

// minProgressEscaped is minProgress when the output is escaped.
const minProgressEscaped = 6

func (c capped) minProgress() int64 {
	if c.Escape {
		return minProgressEscaped
	}
	return minProgress
}
