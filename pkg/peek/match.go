package peek

import (
	"bufio"
	"bytes"
	"io"
	"regexp"
	"regexp/syntax"
	"strings"

	"github.com/retval/retval/pkg/retain"
)

// queryChunk is how much of a value a search reads at a time. Lines that
// fit in it are searched in place; a longer line is searched as a stream.
// (A variable so that tests can make chunk boundaries fall everywhere.)
var queryChunk = 1 << 20

// scanResult is what a search pass finds.
type scanResult struct {
	total  int64   // matching lines
	before int64   // matching lines starting before the after offset
	starts []int64 // line starts of the first matches at or after it
}

// matcher finds matching lines in a value, one pass, bounded memory.
type matcher interface {
	scan(src source, afterOff int64, keep int) (scanResult, error)
}

// compileQuery returns the matcher of a query: a plain substring (SIMD
// search over large chunks) or an RE2 expression matched line by line.
func compileQuery(q string, regex, fold bool) (matcher, error) {
	if q == "" {
		return nil, retain.Errorf(retain.CodeUsage, "empty query: give the text to look for")
	}
	if !regex {
		if strings.Contains(q, "\n") {
			return nil, retain.Errorf(retain.CodeUsage, "a query matches within one line, so it cannot hold a newline; search for one line of it")
		}
		if !fold {
			return substring([]byte(q)), nil
		}
		q = regexp.QuoteMeta(q)
	}
	re, err := lineRegexp(q, fold)
	if err != nil {
		return nil, err
	}
	return &regexMatcher{re: re}, nil
}

// lineRegexp compiles expr so that it matches within one line, like grep:
// nothing in it can match a newline, ^ and \A match at the start of a line,
// $ and \z at its end.
func lineRegexp(expr string, fold bool) (*regexp.Regexp, error) {
	flags := syntax.Perl
	if fold {
		flags |= syntax.FoldCase
	}
	re, err := syntax.Parse(expr, flags)
	if err != nil {
		return nil, retain.Errorf(retain.CodeUsage, "invalid --regex %q: %v", expr, err)
	}
	return regexp.Compile(perLine(re).String())
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

// substring matches lines holding a fixed string. It never splits the
// value into lines: bytes.Index jumps from match to match over large
// chunks, and only the rest of a matching line is skipped, so a rare string
// costs one SIMD pass and no line bookkeeping at all.
type substring []byte

func (q substring) scan(src source, afterOff int64, keep int) (scanResult, error) {
	var r scanResult
	size := src.Size()
	buf := make([]byte, max(queryChunk, 2*len(q)))
	base := int64(0)      // offset of buf[0]
	lineStart := int64(0) // start of the line holding base
	skipping := false     // in a matching line, looking for its end
	for base < size {
		n, err := readFull(src, buf[:min(int64(len(buf)), size-base)], base)
		if err != nil {
			return r, err
		}
		p := buf[:n]
		i := 0
		cur := lineStart // the start of the line holding base+i
		for {
			if skipping {
				j := bytes.IndexByte(p[i:], '\n')
				if j < 0 {
					i = n
					break
				}
				i += j + 1
				cur = base + int64(i)
				skipping = false
			}
			k := bytes.Index(p[i:], q)
			if k < 0 {
				break
			}
			m := i + k
			if j := bytes.LastIndexByte(p[i:m], '\n'); j >= 0 {
				cur = base + int64(i+j+1)
			}
			r.add(cur, afterOff, keep)
			i = m + len(q)
			skipping = true
		}
		adv := n
		if !skipping && base+int64(n) < size {
			// A match may straddle the chunk's end: look again at its last
			// len(q)-1 bytes.
			adv = max(i, n-(len(q)-1))
		}
		if j := bytes.LastIndexByte(p[:adv], '\n'); j >= 0 {
			lineStart = base + int64(j+1)
		}
		base += int64(adv)
	}
	return r, nil
}

func (r *scanResult) add(lineStart, afterOff int64, keep int) {
	r.total++
	if lineStart < afterOff {
		r.before++
	} else if keep < 0 || len(r.starts) < keep {
		r.starts = append(r.starts, lineStart)
	}
}

// regexMatcher matches lines with an RE2 expression (see lineRegexp). Lines
// that fit in a chunk are searched a chunk at a time; a longer line is
// matched as a stream, so memory stays bounded whatever the line length.
type regexMatcher struct{ re *regexp.Regexp }

func (m *regexMatcher) scan(src source, afterOff int64, keep int) (scanResult, error) {
	var r scanResult
	size := src.Size()
	buf := make([]byte, queryChunk)
	base, fill := int64(0), 0 // buf[:fill] holds the bytes at base, base a line start
	for base < size {
		n, err := readFull(src, buf[fill:min(int64(len(buf)), size-base)], base+int64(fill))
		if err != nil {
			return r, err
		}
		n += fill
		atEnd := base+int64(n) == size
		text := buf[:n]
		if !atEnd {
			j := bytes.LastIndexByte(text, '\n')
			if j < 0 {
				// One line longer than the buffer.
				end, err := m.longLine(src, base, &r, afterOff, keep)
				if err != nil {
					return r, err
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
		for i := 0; i <= len(text); {
			loc := m.re.FindIndex(text[i:])
			if loc == nil {
				break
			}
			at := i + loc[0]
			ls := bytes.LastIndexByte(text[:at], '\n') + 1
			r.add(base+int64(ls), afterOff, keep)
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
	return r, nil
}

// longLine matches the line starting at start as a stream and returns the
// offset just past it.
func (m *regexMatcher) longLine(src source, start int64, r *scanResult, afterOff int64, keep int) (int64, error) {
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
		r.add(start, afterOff, keep)
	}
	return end, nil
}
