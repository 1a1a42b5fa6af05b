package cmd

import (
	"io"
	"strconv"
	"strings"

	"github.com/retval/retval/internal/iox"
	"github.com/retval/retval/internal/safetext"
	"github.com/retval/retval/pkg/expand"

	"github.com/retval/retval/pkg/config"
	"github.com/retval/retval/pkg/peek"
	"github.com/retval/retval/pkg/retain"
	"github.com/urfave/cli/v3"
)

func init() { register("peek", peekCommand) }

// peekOptions are peek's flags: each nil when not given.
type peekOptions struct {
	opts
	lines, bytes, query, outline *string
	regex, ignoreCase            *bool
	context, afterLine, after    *int64
}

func peekCommand() *cli.Command {
	var o peekOptions
	return &cli.Command{
		Name:      "peek",
		Usage:     "read slices of a retained value: line ranges, searches, byte ranges, JSON outlines",
		UsageText: "retval peek --run R ID [--lines A-B|N|N-|-N] [--query TEXT [--regex] [--ignore-case] [--context N] [--after-line L]] [--bytes A-B|N-|-N] [--outline [POINTER] [--after K] [--lines N]]",
		Description: `Prints part of a retained value the way a person reads a file. Each line
carries the gutter "N: " (its number, a colon, a space), as read_file shows
it, so a line pasted into an edit is recognised. Without a selector, prints
from line 1 as far as the caps allow (--lines 1-400 by default).

Output is capped at --peek-lines lines and --peek-bytes bytes, and always
stays at least one byte below the retain threshold so a peek is never
retained itself (a threshold of 1 byte leaves no room and is refused;
--threshold 0 lifts the bound). When a cap cuts the output, or the page is
full and the value goes on, a last line names what was shown and the exact
flag that continues, e.g.
   [lines 1-400 of 2871; next: --lines 401-800]
A line longer than the cap is cut on a UTF-8 boundary and the last line
names the --bytes range holding the rest of it. A range that starts inside
the value and goes past its end is cut to its last line, and the last line
says so:
   [lines 9999-10000 of 10000; the value ends at line 10000]
--peek-lines 0 --peek-bytes 0 --threshold 0 lifts the caps: the output is
streamed, for paging into less, whatever the value's size.

--query prints the matching lines (a substring; an RE2 expression with
--regex, matched within each line) and a last line with the total,
   [57 matches; shown 1-40; next: --after-line 913]
A matching line longer than the cap is shown around its first match, with
the window's byte offsets and the --bytes range of the whole line.
With --lines A-B, the search covers those lines alone: matches, context
and the count ("[3 matches in lines 200-400; ...]").
--outline [POINTER] lists the members of the JSON object (or the elements
of the array) at POINTER, the whole document when it is left out or "":
one line each with the pointer that selects it (RFC 6901, ready to paste;
shown as a JSON string when it holds spaces, quotes or controls), its type,
for an object or array its number of members or elements, its size in
bytes, and for a string or number the start of its value:
   [outline of "/packages": object, 1203 members, 612044 bytes]
   /packages/node_modules~1abbrev  object  5 members  247 bytes
   ...
   [members 0-389 and 1200-1202 of 1203; next: --outline /packages --after 389]
The first ones are shown as far as the caps allow and the last three after
a gap; --after K lists from position K+1. A member whose name occurs more
than once ends in "duplicate name" (a pointer to it is ambiguous_json).
The value is read once from the start, nested containers skipped, so
memory does not grow with it. With --lines N it outlines line N's document
of an NDJSON value (one JSON document per line).
--bytes A-B prints the half-open byte range as stored; neither end may
split a UTF-8 sequence.

Ranges take the forms people type: --lines 670 (that line), --lines 670-
(from line 670 to the end, as far as the caps allow), --lines -50 (the
last 50 lines, as tail -n 50), --bytes 4096- (from byte 4096 on) and
--bytes -4096 (the last 4096 bytes, starting on a UTF-8 boundary, so
perhaps a few less). Flags may come before or after ID; after "--"
everything is an ID, so an ID that starts with "-" reads as
"retval peek --run R --lines 1-40 -- -x1Yz".

On a terminal, the value's control bytes other than tab and newline
(ESC, CR, ...), C1 controls, bidi controls and invalid UTF-8 are shown
escaped (\x1b, \u009b, \u202e, \xff) and the caps count the escaped
text; into a pipe or a file, and with --json, the bytes are exact.

Example:
   retval peek --run "$RUN" c1 --lines 120-160
   retval peek --run "$RUN" c1 --query 'FAIL:' --context 2
   retval peek --run "$RUN" c1 --query '^panic: ' --regex --after-line 913
   retval peek --run "$RUN" c1 --bytes 4096-8192
   retval peek --run "$RUN" c2 --outline /packages --after 389
   retval peek --run "$RUN" c1 --lines -50
   retval peek --run "$RUN" c1 --lines 200-400 --query 'FAIL'
   retval peek --run "$RUN" c1 --peek-lines 0 --peek-bytes 0 --threshold 0 | less

Exit status: 0 printed, 1 I/O error or corrupt value, 2 usage (bad flag or
combination, or caps that would reach the threshold), 3 unknown value or
collected run, 7 invalid range (a range that starts past the end, a byte
range out of bounds or splitting a UTF-8 sequence; the message names the
valid range) or, for --outline, not_json, bad_pointer, ambiguous_json.`,
		Flags: append(globalFlags("peek-lines", "peek-bytes", "threshold"),
			&cli.StringFlag{Name: "lines", Usage: "lines A-B (inclusive, from 1), N (one line), N- (to the end) or -N (the last N); with --query, the lines searched", Action: setTo(&o.lines)},
			&cli.StringFlag{Name: "bytes", Usage: "bytes A-B (half-open), N- (to the end) or -N (the last N)", Action: setTo(&o.bytes)},
			&cli.StringFlag{Name: "query", Usage: "print the lines holding TEXT, and how many there are", Action: setTo(&o.query)},
			&cli.BoolFlag{Name: "regex", Usage: "the query is an RE2 expression, matched within each line", Action: setTo(&o.regex)},
			&cli.BoolFlag{Name: "ignore-case", Usage: "match the query regardless of case", Action: setTo(&o.ignoreCase)},
			&cli.Int64Flag{Name: "context", Usage: "lines shown before and after each match", Action: setTo(&o.context)},
			&cli.Int64Flag{Name: "after-line", Usage: "show only matches after line L (the paging flag)", Action: setTo(&o.afterLine)},
			&optionalFlag{&cli.StringFlag{Name: "outline", Usage: "list the members or elements of the JSON value at POINTER (optional: the whole document)", Action: setTo(&o.outline)}, isPointerArg},
			&cli.Int64Flag{Name: "after", Usage: "with --outline: list from the position after K (the paging flag)", Action: setTo(&o.after)},
		),
		Action: action(&o.opts, func(e *env) error { return runPeek(e, &o) }),
	}
}

func runPeek(e *env, o *peekOptions) (err error) {
	r, run, err := o.settingsRun(e)
	if err != nil {
		return err
	}
	args := o.args
	if len(args) != 1 {
		return usageErr("want exactly one value id: retval peek --run R ID [--lines A-B | --query TEXT | --bytes A-B | --outline POINTER]")
	}
	caps, err := peek.CapsFor(r.Limits, r.Values["peek-bytes"].Source != config.FromDefault)
	if err != nil {
		return err
	}
	sel, err := peekSelector(o)
	if err != nil {
		return err
	}
	store := logStore(r.Location(), e, "peek")
	v, err := store.OpenValue(run, args[0])
	if err != nil {
		store.LogSelection(run, args[0], "peek", sel.logged(caps), 0, err)
		return err
	}
	defer v.Close()
	// What is printed, or the error, is accounted for in the read log,
	// with what it selected.
	stdout := &iox.CountingWriter{W: e.stdout}
	defer func() { store.LogSelection(run, args[0], "peek", sel.logged(caps), stdout.N, err) }()
	if sel.kind == "outline" {
		return writeOutline(stdout, isTerminal(e.stdout), v, sel, caps, r.JSON)
	}
	if err := sel.resolve(v); err != nil {
		return err
	}
	sel.resolved = true
	if !r.JSON {
		// Text: streamed when there is no byte cap, escaped on a terminal.
		caps.Escape = isTerminal(e.stdout)
		switch sel.kind {
		case "lines":
			return peek.WriteLines(stdout, v, sel.a, sel.b, caps)
		case "bytes":
			return peek.WriteBytes(stdout, v, sel.a, sel.b, caps)
		default:
			return peek.WriteQuery(stdout, v, sel.query, caps)
		}
	}
	if caps.Bytes < 0 {
		// A JSON page is built whole before it is printed: without a byte
		// cap its memory would grow with the value.
		return usageErr("--json needs a byte cap (peek-bytes is 0): the page is built in memory before it is printed; page through the value with a cap, or read it uncapped without --json, which streams")
	}
	out := peekJSON{ID: string(v.Desc.ID), Run: string(v.Run), Kind: sel.kind}
	var p interface {
		Render() []byte
		Trailer() string
	}
	switch sel.kind {
	case "lines":
		lp, err := peek.Lines(v, sel.a, sel.b, caps)
		if err != nil {
			return err
		}
		p, out.Page = lp, lp
	case "bytes":
		bp, err := peek.Bytes(v, sel.a, sel.b, caps)
		if err != nil {
			return err
		}
		p, out.Page = bp, bp
	case "query":
		qp, err := peek.Query(v, sel.query, caps)
		if err != nil {
			return err
		}
		p, out.Page = qp, qp
	}
	out.Text, out.Trailer = string(p.Render()), p.Trailer()
	return writeJSON(stdout, out)
}

// peekJSON is peek's --json output: the page's fields, and the text the
// command prints without --json.
type peekJSON struct {
	ID      string `json:"id"`
	Run     string `json:"run"`
	Kind    string `json:"kind"` // lines, query or bytes
	Page    any    `json:"page"`
	Trailer string `json:"trailer"`
	Text    string `json:"text"`
}

// selector is what a peek reads.
type selector struct {
	kind  string
	rng   peek.RangeArg // of --lines or --bytes, as typed
	typed string        // --lines as given ("": rng is the default)
	a, b  int64         // rng in the value: lines a..b or bytes [a, b)
	query peek.QueryOptions
	// pointer and after, for an outline (a: its NDJSON line, or 0).
	pointer string
	after   int64
	// resolved: a and b are the lines or bytes in the value.
	resolved bool
}

// logged is what the read log keeps of the selection (retain.Read.Sel):
// the lines or bytes read, as resolved in the value (lines within the
// line cap), else the flags as given.
func (s *selector) logged(c peek.Caps) string {
	switch {
	case s.kind == "outline":
		l := "--outline " + s.pointer
		if s.a > 0 {
			l = "--lines " + strconv.FormatInt(s.a, 10) + " " + l
		}
		return l
	case s.kind == "query":
		l := ""
		if s.typed != "" {
			l = "--lines " + s.typed + " "
		}
		if s.query.Regex {
			l += "--regex "
		}
		if s.query.IgnoreCase {
			l += "--ignore-case "
		}
		return l + "--query " + s.query.Query
	case !s.resolved && s.kind == "lines" && s.typed == "" && c.Lines > 0:
		return "--lines " + peek.Between(1, c.Lines).String()
	case !s.resolved:
		return "--" + s.kind + " " + s.rng.String()
	case s.kind == "lines" && c.Lines > 0:
		return "--lines " + peek.Between(s.a, min(s.b, s.a+c.Lines-1)).String()
	}
	return "--" + s.kind + " " + peek.Between(s.a, s.b).String()
}

// isPointerArg reports whether a word after --outline is its pointer: ""
// or one starting with "/". Anything else is the value id, the pointer
// left out.
func isPointerArg(s string) bool { return s == "" || strings.HasPrefix(s, "/") }

// writeOutline prints the outline sel asks for.
func writeOutline(w io.Writer, terminal bool, v *retain.Value, sel selector, caps peek.Caps, asJSON bool) error {
	ptr := sel.pointer
	f := expand.RefFields{ID: (*string)(&v.Desc.ID), Outline: &ptr}
	if sel.after >= 0 {
		f.After = &sel.after
	}
	if sel.a > 0 {
		f.Lines = &peek.RangeArg{First: sel.a, Last: sel.a}
	}
	ref, err := f.Ref()
	if err != nil {
		return err
	}
	pg, err := expand.Outline(v, ref, expand.OutlineOptions{Lines: caps.Lines, Bytes: caps.Bytes})
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(w, peekJSON{ID: string(v.Desc.ID), Run: string(v.Run), Kind: "outline", Page: pg, Text: pg.Text})
	}
	text := pg.Render()
	if terminal {
		text = safetext.Append(nil, text)
	}
	_, err = w.Write(text)
	return err
}

// resolve turns the range as typed into the lines or bytes of v.
func (s *selector) resolve(v *retain.Value) error {
	var err error
	switch s.kind {
	case "lines":
		if s.typed != "" {
			if err := s.rng.CheckLinesAs(v.Desc.Lines, s.typed); err != nil {
				return err
			}
		}
		s.a, s.b = s.rng.LinesOf(v.Desc.Lines)
	case "bytes":
		s.a, s.b, err = peek.ByteSpan(v, s.rng)
	case "query":
		if s.rng != (peek.RangeArg{}) {
			if err := s.rng.CheckLinesAs(v.Desc.Lines, s.typed); err != nil {
				return err
			}
			s.query.FirstLine, s.query.LastLine = s.rng.LinesOf(v.Desc.Lines)
		}
	}
	return err
}

// flagGiven is a flag's name and whether the command line gave it.
type flagGiven struct {
	name string
	set  bool
}

// peekSelector reads the selector flags and refuses combinations that
// mean nothing.
func peekSelector(o *peekOptions) (selector, error) {
	searchFlags := []flagGiven{{"regex", o.regex != nil}, {"ignore-case", o.ignoreCase != nil}, {"context", o.context != nil}, {"after-line", o.afterLine != nil}}
	if o.outline != nil {
		for _, f := range append([]flagGiven{{"bytes", o.bytes != nil}, {"query", o.query != nil}}, searchFlags...) {
			if f.set {
				return selector{}, usageErr("--%s cannot be combined with --outline: an outline lists a JSON value's members (--lines N names an NDJSON line to outline)", f.name)
			}
		}
		sel := selector{kind: "outline", pointer: *o.outline, after: -1}
		if o.after != nil {
			if sel.after = *o.after; sel.after < 0 {
				return selector{}, usageErr("--after %d: positions count from 0; --after K lists from K+1", sel.after)
			}
		}
		if o.lines != nil {
			n, err := strconv.ParseInt(*o.lines, 10, 64)
			if err != nil || n < 1 {
				return selector{}, usageErr("--lines %q with --outline names one line of an NDJSON value, e.g. --lines 3", *o.lines)
			}
			sel.a = n
		}
		return sel, nil
	}
	if o.after != nil {
		return selector{}, usageErr("--after pages through an outline: give --outline too (--after-line pages a search)")
	}
	var given []string
	for _, f := range []flagGiven{{"lines", o.lines != nil}, {"bytes", o.bytes != nil}, {"query", o.query != nil}} {
		if f.set {
			given = append(given, "--"+f.name)
		}
	}
	if len(given) > 1 && !(len(given) == 2 && o.lines != nil && o.query != nil) {
		return selector{}, usageErr("%s cannot be combined: give one of --lines, --query or --bytes (--lines A-B with --query searches within those lines)", strings.Join(given, " and "))
	}
	if o.query == nil {
		for _, f := range searchFlags {
			if f.set {
				return selector{}, usageErr("--%s only applies to a search: add --query TEXT", f.name)
			}
		}
	}
	var rng peek.RangeArg
	var typed string
	var err error
	switch {
	case o.bytes != nil:
		rng, err = peek.ParseBytes(*o.bytes)
		return selector{kind: "bytes", rng: rng}, err
	case o.lines != nil:
		if rng, err = peek.ParseLines(*o.lines); err != nil {
			return selector{}, err
		}
		typed = *o.lines
	default:
		rng = peek.RangeArg{First: 1, Last: peek.ToEnd}
	}
	if o.query != nil {
		if o.lines == nil {
			rng = peek.RangeArg{}
		}
		return selector{kind: "query", rng: rng, typed: typed, query: peek.QueryOptions{
			Query: *o.query, Regex: deref(o.regex), IgnoreCase: deref(o.ignoreCase),
			Context: deref(o.context), AfterLine: deref(o.afterLine),
		}}, nil
	}
	return selector{kind: "lines", rng: rng, typed: typed}, nil
}
