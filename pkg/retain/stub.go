package retain

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/retval/retval/internal/safetext"
)

// StubInput is everything a stub depends on. A stub is a pure function of
// it, so retain and replay print byte-identical stubs on every machine.
type StubInput struct {
	ID     ID
	Size   int64
	Lines  int64
	SHA256 string
	Meta   Meta
	// Head is the value's first min(PreviewBytes, Size) bytes; Tail its
	// last min(PreviewBytes, Size) bytes. Excerpts are cut at newlines, so
	// they never split a UTF-8 sequence.
	Head, Tail   []byte
	PreviewBytes int64
	PeekLines    int64
	// NotRetained, when set, is why the value was not kept: the header says
	// so and there is no read-more line, because there is nothing to read.
	NotRetained string
	// HeaderOnly prints the header line alone (the bounded policy).
	HeaderOnly bool
	// ReadMore is the form of the read-more line; ReadMoreShell names Run
	// and RunsDir in it.
	ReadMore ReadMore
	Run      ID
	RunsDir  string
	// NDJSON: the value is one JSON document per line; the read-more line
	// says how to read in one line's document.
	NDJSON bool
	// FirstNewline is the offset of the value's first newline and
	// LastLineStart the offset its last line starts at. A stub needs them
	// only for a value of several lines whose first (last) line does not
	// fit its head (tail) excerpt, where Head (Tail) cannot tell them;
	// retain learns them as the value streams past, replay by reading.
	FirstNewline, LastLineStart int64
	// outline, when set, is the preview instead of head and tail: the
	// JSON-aware stub (see jsonStubOutline).
	outline *stubOutline
}

// ReadMore is the form of a stub's read-more line (SPEC §3).
type ReadMore string

const (
	// ReadMorePeek: "[read more: peek ID --lines A-B | --query TEXT]", for a
	// harness whose model has a peek_value tool.
	ReadMorePeek ReadMore = "peek"
	// ReadMoreShell: a whole command that works pasted into a shell as it
	// stands, the alternative named after a comment sign:
	// "retval peek --runs-dir DIR --run R --lines A-B ID  # read more, or: --query TEXT instead of --lines".
	// For harnesses whose model reads values with its shell tool.
	ReadMoreShell ReadMore = "shell"
)

// ParseReadMore checks the name of a read-more form.
func ParseReadMore(s string) (ReadMore, error) {
	switch ReadMore(s) {
	case "", ReadMorePeek:
		return ReadMorePeek, nil
	case ReadMoreShell:
		return ReadMoreShell, nil
	}
	return "", Errorf(CodeUsage, "invalid read-more form %q: want peek or shell", s)
}

// Completeness renders the completeness part of a stub's header.
func Completeness(size int64, m Meta) string {
	var b strings.Builder
	if m.Stopped {
		fmt.Fprintf(&b, "partial: stopped at max-value-size, the first %d bytes", size)
	} else if m.Partial {
		who := "upstream"
		if m.KeptTail {
			who = "retval"
		}
		fmt.Fprintf(&b, "partial: %s kept the last %d bytes", who, size)
		if m.OmittedBytes != nil {
			fmt.Fprintf(&b, ", %d bytes discarded", *m.OmittedBytes)
		}
	} else {
		b.WriteString("complete")
	}
	if m.ExitCode != nil {
		fmt.Fprintf(&b, ", exit %d", *m.ExitCode)
	}
	if m.TimedOut {
		b.WriteString(", timed out")
	}
	if m.Stderr != "" && IsClean(string(m.Stderr)) {
		fmt.Fprintf(&b, ", stderr #%s", m.Stderr)
	}
	return b.String()
}

// RenderStub renders the stub of SPEC §3.
func RenderStub(in StubInput) string {
	var b strings.Builder
	if in.NotRetained != "" {
		fmt.Fprintf(&b, "[not retained: %s]", in.NotRetained)
	} else {
		fmt.Fprintf(&b, "[retained #%s]", in.ID)
	}
	fmt.Fprintf(&b, " %d bytes, %d lines, sha256:%s, %s\n", in.Size, in.Lines, in.SHA256, Completeness(in.Size, in.Meta))
	if in.HeaderOnly || in.Size == 0 {
		return b.String()
	}

	if in.outline != nil && in.NotRetained == "" {
		writeExcerpt(&b, []byte(strings.Join(in.outline.lines, "\n")+"\n"))
		last := in.Lines
		if in.PeekLines > 0 {
			last = min(in.Lines, in.PeekLines)
		}
		lines := "--lines 1-" + strconv.FormatInt(last, 10)
		outline := "--outline " + ShellQuote(in.outline.next)
		if in.ReadMore == ReadMoreShell {
			b.WriteString(ShellPeekCommand(in.RunsDir, in.Run, in.ID, outline))
			b.WriteString("  # read more: any pointer shown after --outline lists its members; or: " + lines + " or --query TEXT instead of --outline\n")
		} else {
			b.WriteString("[read more: ")
			b.WriteString(PeekCommand(in.ID, outline))
			b.WriteString(" | --lines 1-" + strconv.FormatInt(last, 10) + " | --query TEXT]\n")
		}
		return b.String()
	}

	pv := excerpts(in)
	head, tail := pv.head, pv.tail
	firstUnshown := int64(1)
	if len(head) > 0 {
		// The line after the head's last newline: the first line the
		// head does not show whole.
		firstUnshown = int64(bytes.Count(head, nl)) + 1
	}
	writeExcerpt(&b, head)
	if pv.hidden > 0 && in.PreviewBytes > 0 {
		if pv.headCut {
			fmt.Fprintf(&b, "[line 1 continues: %d more %s%s]\n", pv.headMore, bytesWord(pv.headMore), in.bytesCommand(pv.headMore, int64(len(head)), int64(len(head))+pv.headMore))
		}
		if pv.midBytes > 0 {
			fmt.Fprintf(&b, "[… %d lines, %d bytes not shown …]\n", pv.midLines, pv.midBytes)
		}
		if pv.tailCut {
			t := in.Size - int64(len(tail))
			fmt.Fprintf(&b, "[line %d ends: %d %s not shown, then its last %d %s%s]\n", in.Lines, pv.tailMore, bytesWord(pv.tailMore), len(tail), bytesWord(int64(len(tail))), in.bytesCommand(pv.tailMore, t-pv.tailMore, t))
		}
		writeExcerpt(&b, tail)
	} else if pv.hidden == 0 {
		firstUnshown = 1
	}
	if in.NotRetained == "" {
		last := in.Lines
		if in.PeekLines > 0 {
			last = min(in.Lines, firstUnshown+in.PeekLines-1)
		}
		sel := fmt.Sprintf("--lines %d-%d", firstUnshown, last)
		if in.ReadMore == ReadMoreShell {
			b.WriteString(ShellPeekCommand(in.RunsDir, in.Run, in.ID, sel))
			b.WriteString("  # read more, or: --query TEXT instead of --lines")
			if in.NDJSON {
				b.WriteString("; NDJSON (a JSON document a line): --lines N --outline '' lists line N's members")
			}
			b.WriteString("\n")
		} else {
			b.WriteString("[read more: ")
			b.WriteString(PeekCommand(in.ID, sel))
			b.WriteString(" | --query TEXT")
			if in.NDJSON {
				b.WriteString(" | NDJSON, a JSON document a line: --lines N --outline")
			}
			b.WriteString("]\n")
		}
	}
	return b.String()
}

// PeekCommand is how a stub names a peek of id with the given selector
// flags: "peek ID FLAGS", or "peek FLAGS -- ID" for an id that starts with
// "-" (which would otherwise read as a flag).
func PeekCommand(id ID, selector string) string {
	if strings.HasPrefix(string(id), "-") {
		return "peek " + selector + " -- " + string(id)
	}
	return "peek " + string(id) + " " + selector
}

// ShellPeekCommand is a shell command that peeks id of run in the store at
// runsDir with the given selector flags. runsDir is made absolute (so the
// command works from any directory), written with forward slashes
// (C:/Users/me/runs on Windows, which Windows takes as well and which Git
// Bash — the shell Claude Code runs commands in there —, PowerShell and
// cmd all pass on unchanged, where a backslash is an escape in bash), and
// quoted for a POSIX shell where it needs it; ids and runs never do.
func ShellPeekCommand(runsDir string, run, id ID, selector string) string {
	store := "--runs-dir "
	if IsObjectStore(runsDir) {
		store = "--store "
	} else if abs, err := filepath.Abs(runsDir); err == nil {
		runsDir = filepath.ToSlash(abs)
	}
	return "retval peek " + store + ShellQuote(runsDir) + " --run " + string(run) + " " + strings.TrimPrefix(PeekCommand(id, selector), "peek ")
}

// ShellQuote quotes s for a POSIX shell, unless it is made of characters
// no shell treats specially.
func ShellQuote(s string) string {
	safe := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_-./+,:@%=", c)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// bytesWord is "byte" for 1, else "bytes".
func bytesWord(n int64) string {
	if n == 1 {
		return "byte"
	}
	return "bytes"
}

// bytesCommand is how a fragment's marker names the bytes [a, b) of the
// value it does not show: "; peek ID --bytes A-B", or the whole command in
// the shell form; nothing for a value that was not retained (there is
// nothing to read) or when there are no such bytes.
func (in StubInput) bytesCommand(n, a, b int64) string {
	if in.NotRetained != "" || n <= 0 {
		return ""
	}
	sel := fmt.Sprintf("--bytes %d-%d", a, b)
	if in.ReadMore == ReadMoreShell {
		return "; " + ShellPeekCommand(in.RunsDir, in.Run, in.ID, sel)
	}
	return "; " + PeekCommand(in.ID, sel)
}

// previewParts is what a stub shows of a value (docs/design.md, "The
// stub's excerpts"): a head excerpt, a tail excerpt, and the counts of
// the markers between them.
type previewParts struct {
	head, tail []byte
	hidden     int64 // bytes of the value in neither excerpt
	// headCut: the head is a fragment of line 1, which goes on for
	// headMore bytes not shown (up to its newline, or up to the tail
	// when the tail is a fragment of the same line).
	headCut  bool
	headMore int64
	// tailCut: the tail is a fragment of the last line, whose first
	// tailMore bytes (from its start, or from the head's end when the
	// head is a fragment of the same line) are not shown.
	tailCut  bool
	tailMore int64
	// midLines and midBytes are the whole lines between the two that no
	// excerpt or marker accounts for.
	midLines, midBytes int64
}

// excerpts picks the head and tail excerpts. Half the budget goes to the
// head, what the head leaves unused to the tail. Each is cut at line
// boundaries where that leaves something; otherwise it is a fragment of
// its line, cut on a UTF-8 boundary.
func excerpts(in StubInput) previewParts {
	p := max(in.PreviewBytes, 0)
	switch {
	case in.Size <= p:
		return previewParts{head: in.Head[:in.Size]}
	case p == 0:
		return previewParts{hidden: in.Size}
	}
	var pv previewParts
	n := int(min(int64(len(in.Head)), p/2))
	lineEnd := in.Size // where line 1's text ends (its newline, or the end)
	if i := in.firstNewline(); i >= 0 {
		lineEnd = i
	}
	if i := bytes.LastIndexByte(in.Head[:n], '\n'); i >= 0 {
		pv.head = in.Head[:i+1]
	} else if a := fragmentEnd(in.Head, n, int64(len(in.Head)) < in.Size); int64(a) >= lineEnd && lineEnd < int64(len(in.Head)) {
		// All of line 1's text fits, its newline one byte over the half:
		// the line is shown whole (the tail gets one byte less).
		pv.head = in.Head[:lineEnd+1]
	} else {
		pv.head, pv.headCut = in.Head[:a], a > 0
	}

	t := min(p-int64(len(pv.head)), int64(len(in.Tail)))
	w := in.Tail[int64(len(in.Tail))-t:]
	sameLine := pv.headCut && in.Lines <= 1
	lineStart := in.lastLineStart()
	if sameLine {
		lineStart = int64(len(pv.head))
	}
	if i := bytes.IndexByte(w, '\n'); i >= 0 && i < len(w)-1 {
		pv.tail = w[i+1:]
	} else {
		// The last line does not fit whole: a fragment of its end, from
		// the first byte that does not continue a UTF-8 sequence (at most
		// three are skipped; an offset before any other byte never splits
		// a valid one).
		k := 0
		for k < utf8.UTFMax-1 && k < len(w) && isCont(w[k]) {
			k++
		}
		pv.tail = w[k:]
		pv.tailCut = len(pv.tail) > 0 && in.Size-int64(len(pv.tail)) > lineStart
	}
	tailAt := in.Size - int64(len(pv.tail))
	pv.hidden = tailAt - int64(len(pv.head))
	if pv.tailCut {
		pv.tailMore = tailAt - lineStart
	}

	// Whole lines between: from the end of the head's last line (line 1's
	// newline, for a fragment) to the start of the tail's first line.
	from, headLines := int64(len(pv.head)), int64(bytes.Count(pv.head, nl))
	if pv.headCut {
		pv.headMore = lineEnd - from
		from, headLines = min(lineEnd+1, in.Size), 1
	}
	to := tailAt
	if pv.tailCut {
		to = lineStart
	}
	if sameLine {
		pv.headMore = min(pv.headMore, tailAt-int64(len(pv.head)))
		pv.tailCut, pv.tailMore = false, 0 // the head's marker says it all
		return pv
	}
	if to > from {
		tailFirst := in.Lines + 1
		if len(pv.tail) > 0 {
			totalNL := in.Lines
			if pv.tail[len(pv.tail)-1] != '\n' {
				totalNL--
			}
			tailFirst = totalNL - int64(bytes.Count(pv.tail, nl)) + 1
		}
		pv.midLines, pv.midBytes = max(0, tailFirst-headLines-1), to-from
	}
	return pv
}

// firstNewline is the offset of the value's first newline, -1 for none:
// from Head when it holds one, else FirstNewline.
func (in StubInput) firstNewline() int64 {
	if i := bytes.IndexByte(in.Head, '\n'); i >= 0 {
		return int64(i)
	}
	switch {
	case int64(len(in.Head)) >= in.Size:
		return -1
	case in.Lines <= 1: // a newline can only be the last byte
		if len(in.Tail) > 0 && in.Tail[len(in.Tail)-1] == '\n' {
			return in.Size - 1
		}
		return -1
	}
	return in.FirstNewline
}

// lastLineStart is the offset at which the value's last line starts: from
// Tail when it holds the newline before it, else LastLineStart.
func (in StubInput) lastLineStart() int64 {
	if len(in.Tail) > 0 {
		if i := bytes.LastIndexByte(in.Tail[:len(in.Tail)-1], '\n'); i >= 0 {
			return in.Size - int64(len(in.Tail)) + int64(i) + 1
		}
	}
	if int64(len(in.Tail)) >= in.Size || in.Lines <= 1 {
		return 0
	}
	return in.LastLineStart
}

func isCont(c byte) bool { return c&0xC0 == 0x80 }

// fragmentEnd is where a head fragment of at most n bytes of head (the
// value's first bytes, of which there are more) ends: runeStartBefore,
// and before a sequence that head ends in the middle of (it may be whole
// in the value).
func fragmentEnd(head []byte, n int, more bool) int {
	a := runeStartBefore(head, n)
	if more {
		for k := a - 1; k >= 0 && k >= a-(utf8.UTFMax-1); k-- {
			if !isCont(head[k]) {
				if !utf8.FullRune(head[k:]) {
					return k
				}
				break
			}
		}
	}
	return a
}

// runeStartBefore returns the largest cut ≤ n that does not split a valid
// UTF-8 sequence of w (which may extend past n).
func runeStartBefore(w []byte, n int) int {
	for k := n - 1; k >= 0 && k >= n-(utf8.UTFMax-1); k-- {
		if isCont(w[k]) {
			continue
		}
		if r, size := utf8.DecodeRune(w[k:]); !(r == utf8.RuneError && size == 1) && k+size > n {
			return k // the rune at k would be split: cut before it
		}
		return n
	}
	return n
}

// writeExcerpt writes an excerpt and ends it with a newline, escaped by
// internal/safetext: invalid UTF-8, C0 controls but tab and newline, DEL,
// C1 controls and bidi overrides are shown as \xNN or \uNNNN, so a stub is
// always valid, printable UTF-8: no NUL or terminal escape reaches a
// transcript or a screen.
func writeExcerpt(b *strings.Builder, p []byte) {
	if len(p) == 0 {
		return
	}
	if safetext.Clean(p) {
		b.Write(p)
	} else {
		b.Write(safetext.Append(nil, p))
	}
	if p[len(p)-1] != '\n' {
		b.WriteByte('\n')
	}
}
