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

	head, tail, hidden := excerpts(in)
	firstUnshown := int64(1)
	if len(head) > 0 {
		// The line after the head's last newline: the first line the
		// head does not show whole.
		firstUnshown = int64(bytes.Count(head, nl)) + 1
	}
	writeExcerpt(&b, head)
	if hidden > 0 && in.PreviewBytes > 0 {
		headLast := int64(bytes.Count(head, nl))
		if len(head) > 0 && head[len(head)-1] != '\n' {
			headLast++
		}
		tailStart := in.Lines + 1
		if len(tail) > 0 {
			// tail is a suffix of in.Tail: its last byte is the value's.
			totalNL := in.Lines
			if tail[len(tail)-1] != '\n' {
				totalNL--
			}
			tailStart = totalNL - int64(bytes.Count(tail, nl)) + 1
		}
		fmt.Fprintf(&b, "[… %d lines, %d bytes not shown …]\n", max(0, tailStart-headLast-1), hidden)
		writeExcerpt(&b, tail)
	} else if hidden == 0 {
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
// command works from any directory) and quoted for a POSIX shell where it
// needs it; ids and runs never do.
func ShellPeekCommand(runsDir string, run, id ID, selector string) string {
	store := "--runs-dir "
	if IsObjectStore(runsDir) {
		store = "--store "
	} else if abs, err := filepath.Abs(runsDir); err == nil {
		runsDir = abs
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

// excerpts picks the head and tail excerpts and the number of bytes between
// them. Half the budget goes to the head; what the head leaves unused goes
// to the tail.
func excerpts(in StubInput) (head, tail []byte, hidden int64) {
	p := in.PreviewBytes
	if p < 0 {
		p = 0
	}
	if in.Size <= p {
		return in.Head[:in.Size], nil, 0
	}
	head = cutHead(in.Head, int(min(int64(len(in.Head)), p/2)))
	t := min(p-int64(len(head)), int64(len(in.Tail)))
	tail = cutTail(in.Tail[int64(len(in.Tail))-t:])
	return head, tail, in.Size - int64(len(head)) - int64(len(tail))
}

// cutHead returns the head excerpt of at most n bytes of buf: up to its
// last newline, or nothing when the first line does not fit whole (SPEC
// §3: an excerpt never shows a fragment of a line).
func cutHead(buf []byte, n int) []byte {
	if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
		return buf[:i+1]
	}
	return nil
}

// cutTail starts w after its first newline when that leaves something;
// otherwise the last line does not fit whole and the tail is empty.
func cutTail(w []byte) []byte {
	if i := bytes.IndexByte(w, '\n'); i >= 0 && i < len(w)-1 {
		return w[i+1:]
	}
	return nil
}

func isCont(c byte) bool { return c&0xC0 == 0x80 }

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
