package ui

import (
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/retval/retval/internal/safetext"
	"github.com/retval/retval/pkg/expand"
	"github.com/retval/retval/pkg/peek"
	"github.com/retval/retval/pkg/retain"
)

// command is a retval command line naming the store, quoted for a shell.
func (s *Server) command(sub string, args ...string) string {
	var b strings.Builder
	b.WriteString("retval " + sub)
	for _, a := range s.o.StoreArgs {
		b.WriteString(" " + retain.ShellQuote(a))
	}
	for _, a := range args {
		b.WriteString(" " + retain.ShellQuote(a))
	}
	return b.String()
}

// idArgs are the arguments that name value id last, after "--" when it
// starts with "-".
func idArgs(id retain.ID) []string {
	if strings.HasPrefix(string(id), "-") {
		return []string{"--", string(id)}
	}
	return []string{string(id)}
}

// valueRead is a read of the value, with the lines it covers.
type valueRead struct {
	read
	// First and Last are the lines the read covered (0: not a range of
	// lines: a search, an outline, a failed lookup).
	First int64 `json:"first"`
	Last  int64 `json:"last"`
}

// valueInfo is a value as its page heads it.
type valueInfo struct {
	Desc retain.Descriptor `json:"descriptor"`
	// Stub is the value's stub under the server's settings; StubShown is
	// the size of the stub the read log says the model was shown (0:
	// none recorded), which differs when the settings did.
	Stub      string      `json:"stub"`
	StubShown int64       `json:"stub_shown_bytes"`
	Reads     []valueRead `json:"reads"`
	MoreReads int         `json:"more_reads"`
	// Ranges are the lines read back, merged, in order.
	Ranges [][2]int64 `json:"ranges"`
	// Peek and Resolve are command lines that read the value, to which a
	// selector is added.
	Peek    string `json:"peek"`
	Resolve string `json:"resolve"`
}

const (
	maxValueReads    = 2000 // reads listed on a value's page
	maxPointerLookup = 200  // pointer reads turned into lines
)

// apiValue answers GET /api/runs/{run}/values/{id}: the descriptor, the
// stub, the reads of the value from the read log with the lines each
// covered.
func (s *Server) apiValue(_ *request, v *retain.Value) (any, error) {
	st := s.o.Stub
	if st.RunsDir == "" {
		st.RunsDir = s.o.Store.Dir
	}
	stub, err := v.Stub(st)
	if err != nil {
		return nil, err
	}
	info := valueInfo{Desc: v.Desc, Stub: stub, Reads: []valueRead{}, Ranges: [][2]int64{},
		Peek:    s.command("peek", "--run", string(v.Run)),
		Resolve: s.command("resolve", "--run", string(v.Run))}
	_, err = s.o.Store.ScanReads(v.Run, func(rec *retain.Read) {
		if rec.Value != v.Desc.ID {
			return
		}
		switch rec.Op {
		case retain.OpStub, retain.OpPreview:
			info.StubShown = rec.Bytes
		case retain.OpRead, retain.OpRefused, retain.OpCompose:
			if len(info.Reads) < maxValueReads {
				info.Reads = append(info.Reads, valueRead{read: readOf(rec)})
			} else {
				info.MoreReads++
			}
		}
	})
	if err != nil {
		return nil, err
	}
	if err := linesRead(v, info.Reads); err != nil {
		return nil, err
	}
	var ranges [][2]int64
	for _, rd := range info.Reads {
		if rd.First > 0 {
			ranges = append(ranges, [2]int64{rd.First, rd.Last})
		}
	}
	info.Ranges = mergeRanges(ranges)
	return info, nil
}

// linesRead sets the lines each successful lookup of v covered, from its
// selection: a line range as it is, a byte range or a pointer's span
// through the lines holding its first and last byte.
func linesRead(v *retain.Value, reads []valueRead) error {
	type span struct {
		i          int
		start, end int64
	}
	var spans []span
	pointers := 0
	for i := range reads {
		rd := &reads[i]
		if rd.Code != "" || rd.Op != string(retain.OpRead) || rd.Sel == "" {
			continue
		}
		sel := rd.Sel
		var line int64
		if rest, ok := strings.CutPrefix(sel, "--lines "); ok {
			rng, after, _ := strings.Cut(rest, " ")
			if after == "" {
				ra, err := peek.ParseLines(rng)
				if err != nil || ra.CheckLines(v.Desc.Lines) != nil {
					continue
				}
				rd.First, rd.Last = ra.LinesOf(v.Desc.Lines)
				continue
			}
			n, err := strconv.ParseInt(rng, 10, 64)
			if err != nil {
				continue
			}
			line, sel = n, after
		}
		switch {
		case strings.HasPrefix(sel, "--bytes ") && line == 0:
			ra, err := peek.ParseBytes(strings.TrimPrefix(sel, "--bytes "))
			if err != nil {
				continue
			}
			a, b, err := peek.ByteSpan(v, ra)
			if err != nil || a >= b {
				continue
			}
			spans = append(spans, span{i, a, b})
		case strings.HasPrefix(sel, "--pointer ") && pointers < maxPointerLookup:
			pointers++
			p := strings.TrimPrefix(sel, "--pointer ")
			f := expand.RefFields{ID: (*string)(&v.Desc.ID), Pointer: &p}
			if line > 0 {
				f.Lines = &peek.RangeArg{First: line, Last: line}
			}
			ref, err := f.Ref()
			if err != nil {
				continue
			}
			sl, err := expand.Select(v, ref)
			if err != nil {
				continue
			}
			if sl.Start < sl.End {
				spans = append(spans, span{i, sl.Start, sl.End})
			}
		}
	}
	if len(spans) == 0 {
		return nil
	}
	offs := make([]int64, 0, 2*len(spans))
	for _, sp := range spans {
		offs = append(offs, sp.start, sp.end-1)
	}
	sorted := slices.Clone(offs)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	nums, err := peek.LineNumbers(v, sorted)
	if err != nil {
		return err
	}
	lineOf := func(o int64) int64 {
		i, _ := slices.BinarySearch(sorted, o)
		return nums[i]
	}
	for _, sp := range spans {
		reads[sp.i].First, reads[sp.i].Last = lineOf(sp.start), lineOf(sp.end-1)
	}
	return nil
}

// mergeRanges merges overlapping and adjacent line ranges, in order.
func mergeRanges(rs [][2]int64) [][2]int64 {
	slices.SortFunc(rs, func(a, b [2]int64) int {
		if a[0] != b[0] {
			return int(min(max(a[0]-b[0], -1), 1))
		}
		return int(min(max(a[1]-b[1], -1), 1))
	})
	out := [][2]int64{}
	for _, r := range rs {
		if n := len(out); n > 0 && r[0] <= out[n-1][1]+1 {
			out[n-1][1] = max(out[n-1][1], r[1])
			continue
		}
		out = append(out, r)
	}
	return out
}

// shownLine is one line of a value as the viewer shows it: its text with
// control bytes and invalid UTF-8 escaped (safetext, as a stub shows
// them), its line ending left out; Cut counts the bytes not shown.
type shownLine struct {
	N    int64  `json:"n"`
	Text string `json:"text"`
	Cut  int64  `json:"cut,omitempty"`
}

// linesPage is a window of lines.
type linesPage struct {
	First int64       `json:"first"`
	Total int64       `json:"total"`
	Lines []shownLine `json:"lines"`
}

const (
	maxLinesPage  = 1000
	maxLineShown  = 4 << 10 // bytes of one line shown
	maxSpanLoaded = 1 << 20 // a window of lines this small is read in one piece
)

// apiLines answers GET …/lines?first=N&count=K: lines N to N+K-1 (at most
// 1000), each cut at 4 KiB. It finds them through the value's line index
// and reads only them, whatever the value's size.
func (s *Server) apiLines(r *request, v *retain.Value) (any, error) {
	total := v.Desc.Lines
	first := max(r.number("first"), 1)
	count := min(max(r.number("count"), 1), maxLinesPage)
	page := linesPage{First: first, Total: total, Lines: []shownLine{}}
	if total == 0 || first > total {
		return page, nil
	}
	last := min(first+count-1, total)
	want := make([]int64, 0, last-first+2)
	for n := first; n <= last+1; n++ {
		want = append(want, n)
	}
	offs, err := peek.LineOffsets(v, want)
	if err != nil {
		return nil, err
	}
	var whole []byte // the window, when small enough to read at once
	if offs[len(offs)-1]-offs[0] <= maxSpanLoaded {
		if whole, err = v.Bytes(offs[0], offs[len(offs)-1]); err != nil {
			return nil, err
		}
	}
	for i := range len(want) - 1 {
		start, end := offs[i], offs[i+1]
		show := min(end-start, maxLineShown)
		var b []byte
		if whole != nil {
			b = whole[start-offs[0] : start-offs[0]+show]
		} else if b, err = v.Bytes(start, start+show); err != nil {
			return nil, err
		}
		cut := end - start - show
		if cut > 0 {
			// Cut on a UTF-8 boundary: the sequence split goes to what is
			// not shown.
			k := len(b)
			for j := 1; j <= 3 && k-j >= 0; j++ {
				if utf8.RuneStart(b[k-j]) {
					if !utf8.FullRune(b[k-j:]) {
						k -= j
					}
					break
				}
			}
			cut += int64(len(b) - k)
			b = b[:k]
		} else {
			b = trimEOL(b)
		}
		page.Lines = append(page.Lines, shownLine{N: want[i], Text: string(safetext.Append(nil, b)), Cut: cut})
	}
	return page, nil
}

// trimEOL drops a line's newline (and the carriage return before it).
func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}

// queryPage is a page of a search.
type queryPage struct {
	Total   int64       `json:"total"`
	Before  int64       `json:"before"`
	Shown   int64       `json:"shown"`
	Next    int64       `json:"next"`
	Matches []shownLine `json:"matches"`
}

// apiQuery answers GET …/query?q=TEXT[&regex=1][&icase=1][&after=L]: the
// lines matching, as `retval peek --query` finds them (the same engine),
// 200 at a time from after line L.
func (s *Server) apiQuery(r *request, v *retain.Value) (any, error) {
	o := peek.QueryOptions{Query: r.query.Get("q"), Regex: r.flag("regex"), IgnoreCase: r.flag("icase"), AfterLine: max(r.number("after"), 0)}
	if o.Query == "" {
		return nil, retain.Errorf(retain.CodeUsage, "empty search")
	}
	qp, err := peek.Query(v, o, peek.Caps{Lines: 200, Bytes: 256 << 10})
	if err != nil {
		return nil, err
	}
	page := queryPage{Total: qp.Total, Before: qp.Before, Shown: qp.Shown, Next: qp.Next, Matches: []shownLine{}}
	for _, l := range qp.Lines {
		if !l.Match {
			continue
		}
		text := l.Text
		if !l.Cut {
			text = trimEOL(text)
		}
		rs, re := l.Rest()
		var cut int64
		if l.Cut && l.Window == nil {
			cut = re - rs
		}
		page.Matches = append(page.Matches, shownLine{N: l.N, Text: string(safetext.Append(nil, text)), Cut: cut})
	}
	return page, nil
}

// outlineNode is a node of the JSON tree with the command that reads it.
type outlineNode struct {
	expand.OutlineNode
	Command string `json:"command,omitempty"`
}

type outlinePage struct {
	*expand.OutlineNodes
	Head    []outlineNode `json:"head"`
	Tail    []outlineNode `json:"tail"`
	Command string        `json:"command"`
}

// apiOutline answers GET …/outline?pointer=P[&after=K][&line=N]: the
// members or elements of the JSON value at P (of line N's document in an
// NDJSON value), 200 at a time after position K, each with its pointer
// and the `retval resolve` command that prints it.
func (s *Server) apiOutline(r *request, v *retain.Value) (any, error) {
	ptr := r.query.Get("pointer")
	after, err := r.from("after", 0, "a position")
	if err != nil {
		return nil, err
	}
	line, err := r.from("line", 1, "a line number")
	if err != nil {
		return nil, err
	}
	f := expand.RefFields{ID: (*string)(&v.Desc.ID), Outline: &ptr, After: after}
	if line != nil {
		f.Lines = &peek.RangeArg{First: *line, Last: *line}
	}
	ref, err := f.Ref()
	if err != nil {
		return nil, err
	}
	ol, err := expand.OutlineChildren(v, ref, 200)
	if err != nil {
		return nil, err
	}
	resolve := func(p string) string {
		args := []string{"--run", string(v.Run)}
		if line != nil {
			args = append(args, "--lines", strconv.FormatInt(*line, 10))
		}
		args = append(append(args, "--pointer", p), idArgs(v.Desc.ID)...)
		return s.command("resolve", args...)
	}
	page := outlinePage{OutlineNodes: ol, Head: []outlineNode{}, Tail: []outlineNode{}, Command: resolve(ptr)}
	for _, n := range ol.Head {
		page.Head = append(page.Head, outlineNode{OutlineNode: n, Command: resolveIf(n, resolve)})
	}
	for _, n := range ol.Tail {
		page.Tail = append(page.Tail, outlineNode{OutlineNode: n, Command: resolveIf(n, resolve)})
	}
	return page, nil
}

func resolveIf(n expand.OutlineNode, resolve func(string) string) string {
	if n.NameCut || n.Dup {
		return "" // no pointer reaches it alone
	}
	return resolve(n.Pointer)
}

// apiRaw answers GET …/raw: the value's bytes, verified as they are read,
// as a download (never shown by the browser as a page).
func (s *Server) apiRaw(r *request, v *retain.Value) (any, error) {
	h := r.w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", `attachment; filename="`+string(v.Desc.ID)+`.txt"`)
	h.Set("Content-Length", strconv.FormatInt(v.Size(), 10))
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
	if r.Method != http.MethodHead {
		io.Copy(r.w, v.Section(0, v.Size()))
	}
	return nil, nil
}
