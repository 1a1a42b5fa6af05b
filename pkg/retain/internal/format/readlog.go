package format

import (
	"bytes"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

const (
	ReadsName = ".reads"
	// MaxReadRecord bounds one record, newline included. A line longer
	// than this is malformed.
	MaxReadRecord = 512
	// MaxReadLog bounds a read log: once it holds this many bytes no
	// record is added (the failure is reported like any other), and a
	// reader refuses a larger one as corrupt.
	MaxReadLog = 64 << 20
	// maxLogTool bounds the tool name a record carries.
	MaxLogTool = 128
)

// ReadOp says what a record of the read log accounts for.
type ReadOp string

// The records of a read log.
const (
	// OpStub: retain kept a value (Size bytes) and the model was shown its
	// stub (Bytes) instead.
	OpStub ReadOp = "stub"
	// OpVerbatim: retain passed a result of Bytes bytes through unchanged.
	OpVerbatim ReadOp = "verbatim"
	// OpPreview: capacity stopped retain from keeping a value of Size
	// bytes; the model was shown a preview of Bytes bytes with no
	// reference (the rest is not kept).
	OpPreview ReadOp = "preview"
	// OpRead: a lookup (peek, resolve, $list_results, catalogue) returned
	// Bytes bytes, or failed with Code (Bytes is then its message).
	OpRead ReadOp = "read"
	// OpRefused: a call of lookups was refused whole by the step budget
	// (Bytes is the refusal's message).
	OpRefused ReadOp = "refused"
	// OpCompose: expand composed Bytes bytes of tool-call arguments from
	// selections of the value, text the model did not have to write.
	OpCompose ReadOp = "compose"
	// OpReference: an agent's tool call (Tool) carried references that an
	// integration (Via) expanded before the tool ran: the model wrote
	// Bytes bytes of reference forms that stood for Size bytes of text.
	OpReference ReadOp = "reference"
)

// Read is one record of a run's read log.
type Read struct {
	// Time is when it happened; zero means the store's clock.
	Time time.Time
	Op   ReadOp
	// Via is the command or tool that returned the bytes: "peek",
	// "resolve", "catalogue", "expand", "retain", "hook", "proxy",
	// "retval_peek", …
	Via string
	// Value is the value read or retained; empty for a listing.
	Value ID
	// Step is the budget step of a lookup given one (resolve --step).
	Step ID
	// Bytes is what was returned or shown.
	Bytes int64
	// Size is the value's own size (stub and preview records).
	Size int64
	// Call is set on the record that opens a call the model made (a peek,
	// one resolve however many references it holds, a listing): the calls
	// a tool-call envelope is paid for.
	Call bool
	// Code is a failed lookup's error code.
	Code Code
	// Tool is the tool that produced the value (retain's records).
	Tool string
	// Sel is what a lookup selected, in the flag form of peek and resolve
	// ("--lines 5-9", "--bytes 0-100", "--pointer /a/b", "--query TEXT"),
	// ranges as resolved against the value; empty when not known. One
	// longer than MaxReadSel is recorded as its first word and "…".
	Sel string
}

// MaxReadSel bounds the selection a record carries (Read.Sel).
const MaxReadSel = 96

// AppendRecord renders r as one line of the log.
func AppendRecord(b []byte, r Read) []byte {
	b = strconv.AppendInt(b, r.Time.UnixMilli(), 10)
	b = append(b, '\t')
	b = append(b, LogField(string(r.Op), 16)...)
	b = append(b, '\t')
	b = append(b, LogField(r.Via, 32)...)
	b = append(b, '\t')
	b = append(b, r.Value...)
	b = append(b, '\t')
	b = append(b, r.Step...)
	b = append(b, '\t')
	b = strconv.AppendInt(b, max(r.Bytes, 0), 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, max(r.Size, 0), 10)
	b = append(b, '\t')
	if r.Call {
		b = append(b, '1')
	} else {
		b = append(b, '0')
	}
	b = append(b, '\t')
	b = append(b, LogField(string(r.Code), 32)...)
	b = append(b, '\t')
	b = append(b, LogField(r.Tool, MaxLogTool)...)
	if r.Sel != "" {
		b = append(b, '\t')
		b = append(b, logSel(r.Sel)...)
	}
	return append(b, '\n')
}

// LogField is s as a field: tabs, newlines and other control bytes become
// '?', invalid UTF-8 too, and it is cut to at most n bytes on a UTF-8
// boundary.
func LogField(s string, n int) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f || s[i] >= utf8.RuneSelf {
			clean = false
			break
		}
	}
	if !clean {
		s = strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f || r == utf8.RuneError || r >= 0x80 && r < 0xa0 {
				return '?'
			}
			return r
		}, s)
	}
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return s
}

// logSel is a selection as a field: one that would not fit MaxReadSel is
// its first word and "…", so that a cut range or pointer is never read
// back as another one.
func logSel(s string) string {
	if f := LogField(s, MaxReadSel+1); len(f) <= MaxReadSel {
		return f
	}
	word, _, _ := strings.Cut(s, " ")
	return LogField(word, MaxReadSel-len("…")) + "…"
}

// ReadLogInfo is what ScanReads found beside the records.
type ReadLogInfo struct {
	// Records counts the well-formed records.
	Records int64
	// Malformed counts lines that are not records; FirstMalformed is the
	// line number of the first (from 1).
	Malformed      int64
	FirstMalformed int64
	// Bytes is the log's size.
	Bytes int64
}

func (i *ReadLogInfo) NoteMalformed(line int64) {
	if i.Malformed == 0 {
		i.FirstMalformed = line
	}
	i.Malformed++
}

// ParseRecord parses one line (without its newline) into r, reporting
// whether it is a well-formed record. The eleventh field, when there is
// one, is the selection; fields after it are ignored, so that later
// versions can add some.
func ParseRecord(line []byte, r *Read, in Interner) bool {
	var f [10][]byte
	n := 0
	for n < 9 {
		i := bytes.IndexByte(line, '\t')
		if i < 0 {
			return false
		}
		f[n] = line[:i]
		line = line[i+1:]
		n++
	}
	var sel []byte
	if i := bytes.IndexByte(line, '\t'); i >= 0 {
		sel, line = line[i+1:], line[:i]
		if j := bytes.IndexByte(sel, '\t'); j >= 0 {
			sel = sel[:j]
		}
	}
	f[9] = line
	ms, ok := parseUint(f[0])
	if !ok {
		return false
	}
	op := ReadOp(f[1])
	switch op {
	case OpStub, OpVerbatim, OpPreview, OpRead, OpRefused, OpCompose, OpReference:
	default:
		return false
	}
	b, ok1 := parseUint(f[5])
	size, ok2 := parseUint(f[6])
	if !ok1 || !ok2 || len(f[7]) != 1 || f[7][0] != '0' && f[7][0] != '1' {
		return false
	}
	if len(f[3]) > 0 && !IsClean(string(f[3])) || len(f[4]) > 0 && !IsClean(string(f[4])) {
		return false
	}
	*r = Read{
		Time: time.UnixMilli(ms), Op: op, Via: in.Get(f[2]), Value: ID(in.Get(f[3])), Step: ID(in.Get(f[4])),
		Bytes: b, Size: size, Call: f[7][0] == '1', Code: Code(in.Get(f[8])), Tool: in.Get(f[9]),
		Sel: string(sel),
	}
	return true
}

// parseUint parses a non-negative decimal of at most 18 digits.
func parseUint(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// Interner shares the strings of one log's fields, which repeat (a few
// tools, commands and codes; the values of one run), so a scan does not
// allocate for every field of every record.
type Interner map[string]string

func (in Interner) Get(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if s, ok := in[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(in) < 4096 {
		in[s] = s
	}
	return s
}

// ReadsDir is where a run's read log is on object storage, which cannot
// append: one object per record under it.
const ReadsDir = ReadsName + "/"
