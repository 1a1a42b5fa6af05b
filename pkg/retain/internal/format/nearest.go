package format

import (
	"fmt"
	"slices"
	"strings"

	"github.com/retval/retval/internal/textdist"
)

// UnknownValueError is the error of a value id a run does not hold, with
// the run's ids nearest to it: what a typo most likely meant. It is the Err
// of an *Error with CodeUnknownReference.
type UnknownValueError struct {
	Run ID
	ID  string // as given
	// Nearest are the run's value ids within a couple of edits of ID (or
	// that it is a prefix of, or equal to but for case), nearest first, at
	// most maxNearest; never one that differs from ID only in its numbers
	// (another call of a sequence, not a misspelling).
	Nearest []ID
}

func (e *UnknownValueError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "no value %q in run %q", e.ID, e.Run)
	if len(e.Nearest) > 0 {
		b.WriteString("; did you mean ")
		for i, n := range e.Nearest {
			if i > 0 {
				b.WriteString(" or ")
			}
			fmt.Fprintf(&b, "%q", n)
		}
		b.WriteString("?")
	}
	fmt.Fprintf(&b, " (list them with: retval catalogue --run %s)", e.Run)
	return b.String()
}

// maxNearest bounds the suggestions of an unknown value id.
const maxNearest = 3

// MaxScanned bounds the directory entries looked at for suggestions: a
// run holds at most a few thousand files, and a hostile one must not make
// a typo slow.
const MaxScanned = 1 << 16

// NearestAmong ranks the values whose descriptors are among names (the
// entries of a run) by their distance to id.
func NearestAmong(names []string, id string) []ID {
	want := strings.TrimPrefix(id, "#")
	if len(want) < 2 {
		return nil
	}
	if len(names) > MaxScanned {
		names = names[:MaxScanned]
	}
	type cand struct {
		id ID
		d  int
	}
	var found []cand
	limit := textdist.Limit(want)
	for _, name := range names {
		v, ok := strings.CutSuffix(name, MetaExt)
		if !ok || !IsClean(v) {
			continue
		}
		base, sanitized := sanitizedBase(v)
		if numbersDiffer(want, v) || sanitized && numbersDiffer(cleanMapped(want), base) {
			continue // c1 for c2, call-9 for call-10: another call, not a typo
		}
		d := textdist.Distance(want, v)
		if sanitized {
			// A sanitized id ("s2_stderr-1a2b3c4d") is near the call id
			// it was made of ("s2.stderr"): compare their readable parts.
			d = min(d, textdist.Distance(cleanMapped(want), base))
		}
		switch {
		case strings.EqualFold(want, v):
			d = 0
		case d > limit && strings.HasPrefix(v, want):
			d = limit
		case d > limit:
			continue
		}
		found = append(found, cand{ID(v), d})
	}
	slices.SortFunc(found, func(a, b cand) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(string(a.id), string(b.id))
	})
	var out []ID
	for _, c := range found[:min(len(found), maxNearest)] {
		out = append(out, c.id)
	}
	return out
}

// numbersDiffer reports whether a and b differ only in their numbers: the
// same text around runs of digits that are not all the same. Such ids
// name different calls of a sequence (c1 and c2, step-9 and step-10, two
// dates), whose contents are unrelated, so neither is a misspelling of
// the other.
func numbersDiffer(a, b string) bool {
	if a == b {
		return false
	}
	for a != "" && b != "" {
		na, nb := digitRun(a), digitRun(b)
		if (na == 0) != (nb == 0) {
			return false
		}
		if na == 0 {
			if a[0] != b[0] {
				return false
			}
			na, nb = 1, 1
		}
		a, b = a[na:], b[nb:]
	}
	return a == "" && b == ""
}

// digitRun is the length of the run of ASCII digits s begins with.
func digitRun(s string) int {
	n := 0
	for n < len(s) && '0' <= s[n] && s[n] <= '9' {
		n++
	}
	return n
}

// sanitizedBase is the readable part of an id Sanitize made of a call id
// that was not clean ("s2_stderr" of "s2_stderr-1a2b3c4d").
func sanitizedBase(id string) (string, bool) {
	i := len(id) - 9
	if i < 1 || id[i] != '-' || strings.Trim(id[i+1:], "0123456789abcdef") != "" {
		return "", false
	}
	return id[:i], true
}

// cleanMapped is s with the bytes Sanitize replaces made '_', as Sanitize
// writes them.
func cleanMapped(s string) string {
	b := []byte(s[:min(len(s), maxKeep)])
	for i, c := range b {
		if !cleanByte(c) {
			b[i] = '_'
		}
	}
	return string(b)
}
