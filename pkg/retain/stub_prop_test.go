package retain

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

var (
	middleRE   = regexp.MustCompile(`^\[… (\d+) lines, (\d+) bytes not shown …\]$`)
	headCutRE  = regexp.MustCompile(`^\[line 1 continues: (\d+) more bytes?; peek \S+ --bytes (\d+)-(\d+)\]$`)
	tailCutRE  = regexp.MustCompile(`^\[line (\d+) ends: (\d+) bytes? not shown, then its last (\d+) bytes?; peek \S+ --bytes (\d+)-(\d+)\]$`)
	readMoreRE = regexp.MustCompile(`^\[read more: peek (\S+) --lines (\d+)-(\d+) \| --query TEXT\]$`)
)

// TestStubProperties checks, on random texts with lines of every length,
// the rule of docs/design.md ("The stub's excerpts"): the excerpts are a
// verbatim prefix and suffix of the value within the budget; an excerpt
// that is not whole lines is a fragment of the first (last) line, cut on
// a UTF-8 boundary and marked, the marker's counts and --bytes range
// naming exactly the bytes of that line not shown; the middle marker
// counts exactly the whole lines between; every byte is shown or counted
// once; and the read-more line names the first line the head did not show
// whole.
func TestStubProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", "b", " ", "é", "日", "😀", "\n", "\n", "\r\n", "x"}
	for iter := 0; iter < 4000; iter++ {
		var b strings.Builder
		n := 1 + r.IntN(6000)
		noNewlines := r.IntN(10) == 0
		for b.Len() < n {
			if r.IntN(20) == 0 {
				b.WriteString(strings.Repeat("w", r.IntN(1500)))
			}
			c := alphabet[r.IntN(len(alphabet))]
			if noNewlines && strings.Contains(c, "\n") {
				continue
			}
			b.WriteString(c)
		}
		data := []byte(b.String())
		preview := int64(r.IntN(1216))
		peekLines := int64(1 + r.IntN(500))
		st := newStats(preview, false)
		for rest := data; len(rest) > 0; { // in chunks, as retain reads
			k := min(len(rest), 1+r.IntN(3000))
			st.add(rest[:k])
			rest = rest[k:]
		}
		d := &Descriptor{}
		st.descriptor(d)
		first, last := st.lineEnds()
		stub := RenderStub(StubInput{ID: "v", Size: d.Size, Lines: d.Lines, SHA256: d.SHA256,
			Head: st.head, Tail: st.tailBytes(), PreviewBytes: preview, PeekLines: peekLines,
			FirstNewline: first, LastLineStart: last})
		checkStubRule(t, stub, data, d.Lines, preview, peekLines)
	}
}

func checkStubRule(t *testing.T, stub string, data []byte, lines, preview, peekLines int64) {
	t.Helper()
	size := int64(len(data))
	failf := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("size %d, %d lines, preview %d: "+format+"\n%s", append(append([]any{size, lines, preview}, args...), stub)...)
	}
	header, body, _ := strings.Cut(stub, "\n")
	if !strings.HasPrefix(header, "[retained #") || !strings.Contains(header, "] "+strconv.FormatInt(size, 10)+" bytes, ") {
		failf("header %q", header)
	}
	// The alphabet has no backslash: the only escape is CR's.
	body = strings.ReplaceAll(body, `\x0d`, "\r")
	rows := strings.SplitAfter(body, "\n")
	rows = rows[:len(rows)-1]
	rm := readMoreRE.FindStringSubmatch(strings.TrimSuffix(rows[len(rows)-1], "\n"))
	if rm == nil {
		failf("no read-more line")
	}
	rows = rows[:len(rows)-1]
	if preview == 0 {
		if len(rows) != 0 {
			failf("preview 0 shows excerpts")
		}
		return
	}
	// Head rows, then markers, then tail rows.
	var head, tail strings.Builder
	var headCut, middle, tailCut []string
	markers := 0
	for _, row := range rows {
		line := strings.TrimSuffix(row, "\n")
		switch {
		case headCutRE.MatchString(line):
			headCut = headCutRE.FindStringSubmatch(line)
			markers++
		case middleRE.MatchString(line):
			middle = middleRE.FindStringSubmatch(line)
			markers++
		case tailCutRE.MatchString(line):
			tailCut = tailCutRE.FindStringSubmatch(line)
			markers++
		case markers == 0:
			head.WriteString(row)
		default:
			tail.WriteString(row)
		}
	}
	num := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
	if markers == 0 {
		if size > preview || head.String() != string(data) && head.String() != string(data)+"\n" {
			failf("no marker, and not the whole value")
		}
		return
	}
	if size <= preview {
		failf("a value within the budget is cut")
	}
	// An excerpt that does not end in a newline got one added.
	h := head.String()
	if headCut != nil || h != "" && !bytes.HasPrefix(data, []byte(h)) {
		h = strings.TrimSuffix(h, "\n")
	}
	tl := tail.String()
	if size > 0 && data[size-1] != '\n' {
		tl = strings.TrimSuffix(tl, "\n")
	}
	if !bytes.HasPrefix(data, []byte(h)) || !bytes.HasSuffix(data, []byte(tl)) {
		failf("excerpts are not a verbatim prefix and suffix")
	}
	a, tailAt := int64(len(h)), size-int64(len(tl))
	if a+int64(len(tl)) > preview {
		failf("excerpts hold %d bytes", a+int64(len(tl)))
	}
	boundary := func(o int64) bool { return o <= 0 || o >= size || utf8.RuneStart(data[o]) }
	if !boundary(a) || !boundary(tailAt) {
		failf("an excerpt is cut inside a UTF-8 sequence (at %d or %d)", a, tailAt)
	}
	firstNL := int64(bytes.IndexByte(data, '\n'))
	lineEnd := size
	if firstNL >= 0 {
		lineEnd = firstNL
	}
	lastStart := int64(bytes.LastIndexByte(data[:size-1], '\n') + 1)
	from, to := a, tailAt
	if headCut != nil {
		more, x, y := num(headCut[1]), num(headCut[2]), num(headCut[3])
		if strings.Contains(h, "\n") || x != a || y-x != more || more <= 0 || bytes.IndexByte(data[x:y], '\n') >= 0 {
			failf("head marker %q does not name the rest of line 1 after a %d-byte fragment", headCut[0], a)
		}
		if y != lineEnd && (lines > 1 || y != tailAt) {
			failf("head marker ends at %d: line 1 ends at %d, the tail starts at %d", y, lineEnd, tailAt)
		}
		from = min(lineEnd+1, size)
		if lines <= 1 {
			from = y
		}
	} else if h != "" && !strings.HasSuffix(h, "\n") {
		failf("a head without a marker that is not whole lines")
	}
	if tailCut != nil {
		l, more, k, x, y := num(tailCut[1]), num(tailCut[2]), num(tailCut[3]), num(tailCut[4]), num(tailCut[5])
		if l != lines || k != int64(len(tl)) || y != tailAt || y-x != more || more <= 0 || x != lastStart || bytes.IndexByte(data[x:y], '\n') >= 0 {
			failf("tail marker %q does not name the start of line %d before a %d-byte fragment", tailCut[0], lines, len(tl))
		}
		to = x
	} else if tl != "" && tailAt > 0 && data[tailAt-1] != '\n' && !(headCut != nil && lines <= 1) {
		failf("a tail without a marker that is not whole lines")
	}
	if middle != nil {
		nl, nb := num(middle[1]), num(middle[2])
		span := data[from:to]
		wantLines := int64(bytes.Count(span, []byte("\n")))
		if len(span) > 0 && span[len(span)-1] != '\n' {
			wantLines++ // the last line, without a newline
		}
		if nb != to-from || nb <= 0 || nl != wantLines {
			failf("middle marker %q: the whole lines between are bytes %d-%d", middle[0], from, to)
		}
	} else if to > from {
		failf("bytes %d-%d are neither shown nor counted", from, to)
	}
	wantFirst := int64(strings.Count(h, "\n")) + 1
	if num(rm[2]) != wantFirst || num(rm[3]) != min(lines, wantFirst+peekLines-1) {
		failf("read-more names lines %s-%s, want from %d", rm[2], rm[3], wantFirst)
	}
}
