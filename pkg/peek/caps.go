package peek

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/retval/retval/pkg/retain"
)

// Caps bound the output of one peek.
type Caps struct {
	// Lines is the most lines of the value shown; 0 means no line cap.
	Lines int64
	// Bytes is the most bytes of rendered output, gutters and the
	// continuation line included; 0 means no byte cap.
	Bytes int64
}

// DefaultCaps are the caps of SPEC §4: 400 lines, 16 KiB.
var DefaultCaps = Caps{Lines: 400, Bytes: 16 << 10}

// ToEnd as the last line of Lines asks for as many lines from the first as
// the caps allow; it is what a peek without a selector reads.
const ToEnd int64 = math.MaxInt64

// CapsFor returns the caps of a peek under limits l. The byte cap always
// stays below the retain threshold (when that is not 0), so a peek's output
// is never itself retained: a peek-bytes that was not set explicitly is
// lowered to threshold-1, and one set explicitly (flag, environment or
// config file) at or above the threshold — or 0, unlimited — is refused
// with a usage error.
func CapsFor(limits retain.Limits, bytesExplicit bool) (Caps, error) {
	l := limits.Effective()
	c := Caps{Lines: l.PeekLines, Bytes: l.PeekBytes}
	if l.Threshold > 0 && (c.Bytes == 0 || c.Bytes >= l.Threshold) {
		if bytesExplicit {
			what := strconv.FormatInt(c.Bytes, 10) + " bytes"
			if c.Bytes == 0 {
				what = "0 (unlimited)"
			}
			return Caps{}, retain.Errorf(retain.CodeUsage,
				"peek-bytes %s is not below the retain threshold of %d bytes, so a peek could itself be retained; use a peek-bytes below the threshold, or raise the threshold", what, l.Threshold)
		}
		c.Bytes = l.Threshold - 1
	}
	return c, nil
}

// gutter is the read_file gutter of line n: "n: ".
func gutter(n int64) string { return strconv.FormatInt(n, 10) + ": " }

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
func tooSmall(c Caps, need int64) error {
	return retain.Errorf(retain.CodeUsage,
		"the peek output cap of %d bytes is too small to show this value with its continuation line (it needs at least %d); raise peek-bytes or the threshold", c.Bytes, need)
}

// minProgress is the least room for content a cut needs: one whole UTF-8
// sequence, so every continuation moves forward.
const minProgress = utf8.UTFMax
