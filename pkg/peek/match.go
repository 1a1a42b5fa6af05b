package peek

import (
	"bufio"
	"bytes"
	"io"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/retval/retval/internal/pairindex"
	"github.com/retval/retval/pkg/retain"
)

// queryChunk is how much of a value a search reads at a time. Lines that
// fit in it are searched in place; a longer line is searched as a stream.
// (A variable so that tests can make chunk boundaries fall everywhere.)
var queryChunk = 1 << 20

// scanResult is what a search pass finds.
type scanResult struct {
	afterOff int64 // matches in lines from here on are kept
	// from and to confine the search to the lines starting in [from, to)
	// (to 0: to the end).
	from, to int64
	// keep is how many line starts to keep (-1: all), unless emit is set:
	// then each is handed to emit, and a search stops at its error.
	keep  int
	emit  func(lineStart int64) error
	total int64 // matching lines
	// before counts the matching lines starting before afterOff.
	before int64
	starts []int64 // line starts of the first matches at or after it
}

// matcher finds matching lines in a value, one pass, bounded memory.
type matcher interface {
	// scan finds every matching line of src, in order, adding each to r.
	scan(src source, r *scanResult) error
	// locate returns the byte range of the first match in the line
	// [ls, le) of src (its newline excluded), which must match.
	locate(src source, ls, le int64) (start, end int64, err error)
}

// compileQuery returns the matcher of a query: a fixed string, plain or
// case-folded (SIMD search over large chunks), or an RE2 expression
// matched line by line.
func compileQuery(q string, regex, fold bool) (matcher, error) {
	if q == "" {
		return nil, retain.Errorf(retain.CodeUsage, "empty query: give the text to look for")
	}
	if !regex {
		if strings.Contains(q, "\n") {
			return nil, retain.Errorf(retain.CodeUsage, "a query matches within one line, so it cannot hold a newline; search for one line of it")
		}
		if !fold {
			return fixed{&substring{q: []byte(q), second: -1}}, nil
		}
		if f := newFolded(q); f != nil {
			return fixed{f}, nil
		}
		if !utf8.ValidString(q) {
			return nil, optionErr("%s folds the case of characters, and the query is not valid UTF-8; search for its bytes without it", []string{"ignore-case"})
		}
		q = regexp.QuoteMeta(q)
	}
	re, syn, err := lineRegexp(q, fold)
	if err != nil {
		return nil, err
	}
	return &regexMatcher{re: re, required: requiredBytes(syn)}, nil
}

// lineRegexp compiles expr so that it matches within one line, like grep:
// nothing in it can match a newline, ^ and \A match at the start of a line,
// $ and \z at its end.
func lineRegexp(expr string, fold bool) (*regexp.Regexp, *syntax.Regexp, error) {
	flags := syntax.Perl
	if fold {
		flags |= syntax.FoldCase
	}
	re, err := syntax.Parse(expr, flags)
	if err != nil {
		return nil, nil, optionErr("invalid %s %q: %v", []string{"regex"}, expr, err)
	}
	re = perLine(re)
	c, err := regexp.Compile(re.String())
	return c, re, err
}

// requiredBytes returns, for each rune every match of re must contain (the
// literals of its top-level sequence), the bytes of which one must occur
// where that rune matches: the first byte of each spelling of the rune
// under case folding. A search looks for these with IndexByte and runs the
// expression only on the lines that have them.
func requiredBytes(re *syntax.Regexp) [][]byte {
	var lits []*syntax.Regexp
	var walk func(*syntax.Regexp)
	walk = func(r *syntax.Regexp) {
		switch r.Op {
		case syntax.OpLiteral:
			lits = append(lits, r)
		case syntax.OpConcat:
			for _, s := range r.Sub {
				walk(s)
			}
		case syntax.OpCapture:
			walk(r.Sub[0])
		case syntax.OpPlus:
			walk(r.Sub[0]) // x+ holds at least one x
		}
	}
	walk(re)
	var out [][]byte
	for _, l := range lits {
		for _, r := range l.Rune {
			if r == utf8.RuneError {
				continue // it matches invalid bytes too: no byte is required
			}
			var set []byte
			x := r
			for {
				var enc [utf8.UTFMax]byte
				utf8.EncodeRune(enc[:], x)
				if !bytes.Contains(set, enc[:1]) {
					set = append(set, enc[0])
				}
				if l.Flags&syntax.FoldCase == 0 {
					break
				}
				if x = unicode.SimpleFold(x); x == r {
					break
				}
			}
			out = append(out, set)
		}
	}
	return out
}

// perLine rewrites re so that it cannot match across a newline.
func perLine(re *syntax.Regexp) *syntax.Regexp {
	for i, s := range re.Sub {
		re.Sub[i] = perLine(s)
	}
	switch re.Op {
	case syntax.OpAnyChar:
		re.Op = syntax.OpAnyCharNotNL
	case syntax.OpBeginText:
		re.Op = syntax.OpBeginLine
	case syntax.OpEndText:
		re.Op, re.Flags = syntax.OpEndLine, re.Flags&^syntax.WasDollar
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r == '\n' {
				return &syntax.Regexp{Op: syntax.OpNoMatch}
			}
		}
	case syntax.OpCharClass:
		var out []rune
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if lo <= '\n' && '\n' <= hi {
				if lo < '\n' {
					out = append(out, lo, '\n'-1)
				}
				if hi > '\n' {
					out = append(out, '\n'+1, hi)
				}
				continue
			}
			out = append(out, lo, hi)
		}
		if len(out) == 0 {
			return &syntax.Regexp{Op: syntax.OpNoMatch}
		}
		re.Rune = out
	}
	return re
}

// fixed is a matcher of lines holding a fixed pattern: a plain substring,
// or one under Unicode case folding. Its scan never splits the value into
// lines: it jumps from candidate to candidate with a SIMD IndexByte on the
// pattern's rarest byte (by the value's own byte counts; or on a pair of
// its bytes, see substring), and after a match skips only the rest of
// that line, so a rare string costs one pass at memory speed and no line
// bookkeeping at all. Chunks are read
// block-aligned straight into their buffers (retain.Value.ReadBlocks), by
// several goroutines ahead of the scan where the value allows it
// (chunkReader); the last maxLen-1 bytes of a chunk are kept in front of
// the next, for matches that straddle the boundary.
type fixed struct{ finder }

// finder finds a fixed pattern.
type finder interface {
	// tune picks what to look for first, given a sample of the value.
	tune(sample []byte)
	// reset starts over on a new text.
	reset()
	// find returns the first match in p starting at or after from and
	// lying wholly in p, or -1. Until reset, from never goes back.
	find(p []byte, from int) (start, end int)
	// maxLen is the length in bytes of the longest match.
	maxLen() int
	// clone returns a finder of the same pattern, tuned alike, with a
	// state of its own (for another goroutine).
	clone() finder
}

func (m fixed) scan(src source, r *scanResult) error {
	ov := m.maxLen() - 1
	cr, err := newChunkReader(src, max(queryChunk, m.maxLen()), ov, m.finder)
	if err != nil {
		return err
	}
	defer cr.Close()
	return cr.Guard(func() error {
		tuned := false
		lineStart := int64(0) // start of the line holding the first byte of p
		skipping := false     // in a matching line, looking for its end
		kept := 0             // bytes of the chunk before kept in front
		for {
			p, pbase, miss, err := cr.Next(kept)
			if err != nil || p == nil {
				return err
			}
			if !tuned {
				m.tune(p[:min(len(p), 256<<10)])
				tuned = true
			}
			m.reset()
			i := 0
			cur := lineStart // the start of the line holding pbase+i
			for !miss || skipping {
				if skipping {
					j := bytes.IndexByte(p[i:], '\n')
					if j < 0 {
						i = len(p)
						break
					}
					i += j + 1
					cur = pbase + int64(i)
					skipping = false
				}
				if miss {
					break // the reader ahead found no match in p
				}
				at, e := m.find(p, i)
				if at < 0 {
					break
				}
				if j := bytes.LastIndexByte(p[i:at], '\n'); j >= 0 {
					cur = pbase + int64(i+j+1)
				}
				if err := r.add(cur); err != nil {
					return err
				}
				i = e
				skipping = true
			}
			kept = 0
			if !skipping {
				kept = min(ov, len(p)-i)
			}
			if j := bytes.LastIndexByte(p[:len(p)-kept], '\n'); j >= 0 {
				lineStart = pbase + int64(j+1)
			}
		}
	})
}

func (m fixed) locate(src source, ls, le int64) (int64, int64, error) {
	ov := m.maxLen() - 1
	buf := make([]byte, max(scanChunk, 2*m.maxLen()))
	for at := ls; at < le; {
		n, err := readFull(src, buf[:min(int64(len(buf)), le-at)], at)
		if err != nil {
			return 0, 0, err
		}
		m.reset()
		if s, e := m.find(buf[:n], 0); s >= 0 {
			return at + int64(s), at + int64(e), nil
		}
		if at+int64(n) >= le {
			break
		}
		at += int64(max(n-ov, 1))
	}
	return 0, 0, errNoMatch
}

// substring is a plain query: the bytes themselves.
type substring struct {
	q      []byte
	anchor int // the position in q of its rarest byte
	// second, when ≥ 0, is the position of another of its bytes: where
	// the rarest occurs in the value at all, candidates are the places
	// where both stand at their distance (pairindex), far fewer than
	// those of one byte when no byte of q is rare (ERROR in a log of
	// DEBUG and WARN lines).
	second int
}

func (q *substring) tune(sample []byte) {
	var count [256]int
	for _, c := range sample {
		count[c]++
	}
	q.anchor, q.second = rarestOf(q.q, &count, -1), -1
	n := count[q.q[q.anchor]]
	if n == 0 || len(q.q) < 2 {
		return // IndexByte on a byte the value does not hold is fastest
	}
	// The second byte is one of the next rarest few, the one whose pair
	// with the anchor the sample holds least: taken where that halves the
	// candidates at least (a common string's pairs are its matches).
	others := make([]int, 0, len(q.q)-1)
	for i := range q.q {
		if i != q.anchor {
			others = append(others, i)
		}
	}
	slices.SortStableFunc(others, func(a, b int) int { return count[q.q[a]] - count[q.q[b]] })
	limit := n / 2
	for _, j := range others[:min(len(others), 4)] {
		lo, hi := min(q.anchor, j), max(q.anchor, j)
		if k := pairCount(sample, q.q[lo], q.q[hi], hi-lo, limit+1); k <= limit {
			q.second, limit = j, k-1
			if k == 0 {
				break
			}
		}
	}
}

// pairCount counts the places where c1 and c2 stand at distance d in p,
// up to most.
func pairCount(p []byte, c1, c2 byte, d, most int) int {
	n := 0
	for i := 0; n < most; n++ {
		k := pairindex.Index(p[i:], c1, c2, d)
		if k < 0 {
			break
		}
		i += k + 1
	}
	return n
}

func (q *substring) maxLen() int   { return len(q.q) }
func (q *substring) reset()        {}
func (q *substring) clone() finder { c := *q; return &c }

// find returns the first q in p[from:], finding candidates by the byte of
// q at anchor, or by the pair of bytes at anchor and second.
func (q *substring) find(p []byte, from int) (int, int) {
	if q.second >= 0 {
		return q.findPair(p, from)
	}
	c := q.q[q.anchor]
	for i := from; len(p)-i >= len(q.q); {
		k := bytes.IndexByte(p[i+q.anchor:len(p)-len(q.q)+q.anchor+1], c)
		if k < 0 {
			return -1, -1
		}
		s := i + k
		if p[s] == q.q[0] && bytes.Equal(p[s:s+len(q.q)], q.q) {
			return s, s + len(q.q)
		}
		i = s + 1
	}
	return -1, -1
}

func (q *substring) findPair(p []byte, from int) (int, int) {
	lo, hi := min(q.anchor, q.second), max(q.anchor, q.second)
	for i := from; len(p)-i >= len(q.q); {
		// A match at s has q[lo] at s+lo and q[hi] at s+hi, s ≤ len(p)-len(q).
		k := pairindex.Index(p[i+lo:len(p)-len(q.q)+hi+1], q.q[lo], q.q[hi], hi-lo)
		if k < 0 {
			return -1, -1
		}
		s := i + k
		if bytes.Equal(p[s:s+len(q.q)], q.q) {
			return s, s + len(q.q)
		}
		i = s + 1
	}
	return -1, -1
}

// folded is a query under Unicode simple case folding, as RE2's (?i) reads
// a literal: a match is a run of runes each in the fold orbit of the
// query's rune at its place (unicode.SimpleFold), so "k" also matches K
// and the Kelvin sign, whose spellings differ in length. Candidates are
// the first bytes of the spellings of the query's rarest rune; at each,
// the runes after it are matched forwards and the runes before it
// backwards.
type folded struct {
	runes  [][]rune // the orbit of each rune of the query
	anchor int      // the rune whose first bytes are looked for
	first  [][]byte // the first bytes of the spellings of each rune
	cand   candidates
	pre    int // the most bytes the runes before the anchor take
	max    int // the most bytes a match takes
}

// newFolded returns the folded matcher of q, or nil where q holds a byte
// that is not UTF-8 or U+FFFD (which RE2 matches against invalid bytes).
func newFolded(q string) *folded {
	if !utf8.ValidString(q) || strings.ContainsRune(q, utf8.RuneError) {
		return nil
	}
	f := &folded{}
	for _, r := range q {
		orbit := []rune{r}
		for x := unicode.SimpleFold(r); x != r; x = unicode.SimpleFold(x) {
			orbit = append(orbit, x)
		}
		var first []byte
		longest := 0
		for _, x := range orbit {
			var enc [utf8.UTFMax]byte
			n := utf8.EncodeRune(enc[:], x)
			longest = max(longest, n)
			if !bytes.Contains(first, enc[:1]) {
				first = append(first, enc[0])
			}
		}
		f.runes, f.first = append(f.runes, orbit), append(f.first, first)
		f.max += longest
	}
	f.setAnchor(0)
	return f
}

func (f *folded) setAnchor(a int) {
	f.anchor, f.pre = a, 0
	for _, orbit := range f.runes[:a] {
		longest := 0
		for _, x := range orbit {
			longest = max(longest, utf8.RuneLen(x))
		}
		f.pre += longest
	}
	f.cand = candidates{set: f.first[a], next: make([]int, len(f.first[a]))}
}

func (f *folded) tune(sample []byte) {
	var count [256]int
	for _, c := range sample {
		count[c]++
	}
	best, bestN := 0, -1
	for i, set := range f.first {
		n := 0
		for _, c := range set {
			n += count[c]
		}
		if bestN < 0 || n < bestN {
			best, bestN = i, n
		}
	}
	f.setAnchor(best)
}

func (f *folded) maxLen() int { return f.max }
func (f *folded) reset()      { f.cand.reset() }

func (f *folded) clone() finder {
	c := *f
	c.cand = candidates{set: f.cand.set, next: make([]int, len(f.cand.next))}
	return &c
}

// find looks for the anchor's first bytes with candidates, whose memory of
// where each byte occurs next is what keeps a scan one pass: it lasts
// until reset, so from must not go back.
func (f *folded) find(p []byte, from int) (int, int) {
	for pos := from; ; pos++ {
		c := f.cand.find(p, pos)
		if c < 0 {
			return -1, -1
		}
		pos = c
		e, ok := f.forward(p, c)
		if !ok {
			continue
		}
		if s, ok := f.backward(p[from:], c-from); ok {
			return from + s, e
		}
	}
}

// forward matches the runes from the anchor on at p[at:] and returns
// where the match ends.
func (f *folded) forward(p []byte, at int) (int, bool) {
	for _, orbit := range f.runes[f.anchor:] {
		r, n := utf8.DecodeRune(p[at:])
		if n == 0 || !slices.Contains(orbit, r) || r == utf8.RuneError && n == 1 {
			return 0, false
		}
		at += n
	}
	return at, true
}

// backward matches the runes before the anchor ending at p[:at] and
// returns where the match starts.
func (f *folded) backward(p []byte, at int) (int, bool) {
	for i := f.anchor - 1; i >= 0; i-- {
		r, n := utf8.DecodeLastRune(p[:at])
		if n == 0 || !slices.Contains(f.runes[i], r) || r == utf8.RuneError && n == 1 {
			return 0, false
		}
		at -= n
	}
	return at, true
}

// errNoMatch is the error of locate on a line that does not match: the
// value changed under a search, or a matcher disagrees with itself.
var errNoMatch = retain.Errorf(retain.CodeCorrupt, "a line found by a search does not match on a second read; run retval verify")

// rarestOf returns the position in q of its byte least counted, other
// than position not.
func rarestOf(q []byte, count *[256]int, not int) int {
	best := -1
	for i := range q {
		if i != not && (best < 0 || count[q[i]] < count[q[best]]) {
			best = i
		}
	}
	return best
}

// readChunk reads len(p) bytes at off (fewer at the end), through
// retain.Value.ReadBlocks when src has it.
func readChunk(src source, p []byte, off int64) (int, error) {
	if br, ok := src.(interface {
		ReadBlocks([]byte, int64) (int, error)
	}); ok {
		n, err := br.ReadBlocks(p, off)
		if err == io.EOF && off+int64(n) == src.Size() {
			err = nil
		}
		return n, err
	}
	return readFull(src, p, off)
}

func (r *scanResult) add(lineStart int64) error {
	if lineStart < r.from || r.to > 0 && lineStart >= r.to {
		return nil
	}
	r.total++
	switch {
	case lineStart < r.afterOff:
		r.before++
	case r.emit != nil:
		return r.emit(lineStart)
	case r.keep < 0 || len(r.starts) < r.keep:
		r.starts = append(r.starts, lineStart)
	}
	return nil
}

// regexMatcher matches lines with an RE2 expression (see lineRegexp). Lines
// that fit in a chunk are searched a chunk at a time; a longer line is
// matched as a stream, so memory stays bounded whatever the line length.
type regexMatcher struct {
	re       *regexp.Regexp
	required [][]byte // see requiredBytes
}

// candidates finds, in text, the next byte of one set of required bytes:
// the set that is rarest in a sample of the value.
type candidates struct {
	set  []byte
	next []int // next occurrence of each byte at or after the last position asked; -1 none
	from int
}

func (m *regexMatcher) pick(sample []byte) *candidates {
	if len(m.required) == 0 {
		return nil
	}
	var count [256]int
	for _, c := range sample {
		count[c]++
	}
	best, bestN := 0, -1
	for i, set := range m.required {
		n := 0
		for _, c := range set {
			n += count[c]
		}
		if bestN < 0 || n < bestN {
			best, bestN = i, n
		}
	}
	return &candidates{set: m.required[best], next: make([]int, len(m.required[best]))}
}

// reset starts over on a new text.
func (c *candidates) reset() {
	for j := range c.next {
		c.next[j] = -2 // unknown
	}
	c.from = 0
}

// find returns the first position ≥ pos in text holding a byte of the set,
// or -1. Positions asked for never go back until reset.
func (c *candidates) find(text []byte, pos int) int {
	best := -1
	for j, b := range c.set {
		if c.next[j] != -1 && c.next[j] < pos {
			if k := bytes.IndexByte(text[pos:], b); k < 0 {
				c.next[j] = -1
			} else {
				c.next[j] = pos + k
			}
		}
		if n := c.next[j]; n >= 0 && (best < 0 || n < best) {
			best = n
		}
	}
	return best
}

func (m *regexMatcher) scan(src source, r *scanResult) error {
	size := src.Size()
	buf := make([]byte, queryChunk)
	base, fill := int64(0), 0 // buf[:fill] holds the bytes at base, base a line start
	var cand *candidates
	picked := false
	for base < size {
		n, err := readFull(src, buf[fill:min(int64(len(buf)), size-base)], base+int64(fill))
		if err != nil {
			return err
		}
		n += fill
		atEnd := base+int64(n) == size
		text := buf[:n]
		if !atEnd {
			j := bytes.LastIndexByte(text, '\n')
			if j < 0 {
				// One line longer than the buffer.
				end, err := m.longLine(src, base, r)
				if err != nil {
					return err
				}
				base, fill = end, 0
				continue
			}
			text = text[:j+1]
		}
		consumed := len(text)
		if len(text) > 0 && text[len(text)-1] == '\n' {
			text = text[:len(text)-1]
		}
		if cand == nil && !picked {
			cand, picked = m.pick(text[:min(len(text), 256<<10)]), true
		}
		if cand != nil {
			// Run the expression only on lines holding a required byte.
			cand.reset()
			for pos := 0; pos <= len(text); {
				c := cand.find(text, pos)
				if c < 0 {
					break
				}
				ls := bytes.LastIndexByte(text[pos:c], '\n') + 1 + pos
				le := len(text)
				if j := bytes.IndexByte(text[c:], '\n'); j >= 0 {
					le = c + j
				}
				if m.re.Match(text[ls:le]) {
					if err := r.add(base + int64(ls)); err != nil {
						return err
					}
				}
				pos = le + 1
			}
			fill = copy(buf, buf[consumed:n])
			base += int64(consumed)
			if atEnd {
				break
			}
			continue
		}
		for i := 0; i <= len(text); {
			loc := m.re.FindIndex(text[i:])
			if loc == nil {
				break
			}
			at := i + loc[0]
			ls := bytes.LastIndexByte(text[:at], '\n') + 1
			if err := r.add(base + int64(ls)); err != nil {
				return err
			}
			j := bytes.IndexByte(text[at:], '\n')
			if j < 0 {
				break
			}
			i = at + j + 1
		}
		fill = copy(buf, buf[consumed:n])
		base += int64(consumed)
		if atEnd {
			break
		}
	}
	return nil
}

// longLine matches the line starting at start as a stream and returns the
// offset just past it.
func (m *regexMatcher) longLine(src source, start int64, r *scanResult) (int64, error) {
	end, newline, err := lineEnd(src, start)
	if err != nil {
		return 0, err
	}
	textEnd := end
	if newline {
		textEnd--
	}
	rd := bufio.NewReaderSize(io.NewSectionReader(src, start, textEnd-start), scanChunk)
	if m.re.MatchReader(rd) {
		if err := r.add(start); err != nil {
			return 0, err
		}
	}
	return end, nil
}

func (m *regexMatcher) locate(src source, ls, le int64) (int64, int64, error) {
	rd := bufio.NewReaderSize(io.NewSectionReader(src, ls, le-ls), scanChunk)
	loc := m.re.FindReaderIndex(rd)
	if loc == nil {
		return 0, 0, errNoMatch
	}
	return ls + int64(loc[0]), ls + int64(loc[1]), nil
}
