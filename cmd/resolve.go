package cmd

import (
	"fmt"
	"strings"

	"github.com/retval/retval/pkg/expand"
	"github.com/retval/retval/pkg/peek"
	"github.com/retval/retval/pkg/retain"
	"github.com/urfave/cli/v3"
)

func init() { register("resolve", resolveCommand) }

// resolveOptions are resolve's flags: each nil when not given.
type resolveOptions struct {
	opts
	bytes, lines, pointer, outline, as, sha256, step *string
	after                                            *int64
	batch                                            bool
}

func resolveCommand() *cli.Command {
	var o resolveOptions
	return &cli.Command{
		Name:  "resolve",
		Usage: "print exactly the bytes a reference selects, under the lookup budget",
		UsageText: `retval resolve --run R ID [--bytes A-B | --lines A-B | [--lines N] --pointer P [--as lexeme|string] | [--lines N] --outline P [--after K]] [--sha256 HEX] [--step S]
retval resolve --run R --batch [--step S] < refs.json`,
		Description: `Looks up one reference and prints the selected bytes on stdout, nothing
added. ID is the value's id as its stub shows it ("c1" or "#c1"). It selects
the whole value, a half-open byte range (--bytes 0-100 is bytes 0 to 99;
neither end may split a UTF-8 sequence), an inclusive line range (1-based,
newlines kept as they are: \r\n stays \r\n), or the JSON value an RFC 6901
pointer selects, as its original bytes (--as lexeme, the default) or, for a
string, its decoded text (--as string). --outline P lists the members (or
elements) of the JSON value at P instead, one per line with its pointer,
type, size and count, as many as fit --max-lookup-bytes, and names the
reference that reads on ("after": K lists from position K+1). In an NDJSON
value (one JSON document per line: its descriptor says "ndjson": true),
--lines N with --pointer or --outline applies them to line N's document.
At most one of --bytes, --lines and --pointer (or --outline), --lines
alongside a pointer naming one line; --as only with --pointer. --sha256
makes the lookup fail unless
the value's digest is HEX. A range is never cut short: one that starts or
ends past the end of the value fails (invalid_range), naming the valid
range ("the value has lines 1-10000", "bytes 0-512"). --lines also takes
N (that line), N- (to the last line) and -N (the last N lines, all of
them when there are fewer); --bytes N- (to the end) and -N (the last N
bytes, starting on a UTF-8 boundary, so perhaps a few less).

--batch reads a JSON array of references from stdin, in the form models
use:
   {"$ref": "ID"}                                  whole value
   {"$ref": "ID", "bytes": [start, end]}           bytes [start, end)
   {"$ref": "ID", "lines": [first, last]}          lines first..last
   {"$ref": "ID", "lines": "-50"}                  the last 50 lines ("670" and
                                                   "670-" too, as --lines takes them)
   {"$ref": "ID", "bytes": "-4096"}                the last 4096 bytes ("100-" too)
   {"$ref": "ID", "pointer": "/a/0", "as": "string"}
   {"$ref": "ID", "outline": "/a", "after": K}     members of /a from K+1
   {"$ref": "ID", "lines": [n, n], "pointer": "/a"} /a in line n's document
   {"$list_results": N}                            the catalogue from value N
each optionally with "sha256". --batch and --json print one JSON object per
line for each reference, in order (JSON Lines):
   {"ok":true,"text":"…","bytes":N,"sha256":"<digest of text>"}
   {"ok":false,"error":{"code":"…","message":"…"}}
A failed lookup is a result, not a failure of the command: the exit status
is then 0. A JSON string holds text, so there a selection that is not valid
UTF-8 (a Latin-1 file, say) fails not_utf8, naming its first bad byte,
rather than come back altered; one reference without --json prints the
bytes as they are. A string whose text holds a lone UTF-16 surrogate
escape ("\ud800") has no UTF-8 form: with --as string it fails not_utf8
either way (--as lexeme returns its escaped form).

{"$list_results": N} answers {"run", "page": N, "total", "next", "values"}:
the run's values from the Nth (oldest first, 0 first), as compact entries
(id, tool, size, lines, complete, created, sha256), as many as fit
--max-lookup-bytes after JSON escaping and at most 20. "next" is the N
that continues right after the last one shown, null at the end. When not
even one entry fits, the lookup fails too_large: raise --max-lookup-bytes.

Budget: a step may make --max-lookups lookups (8), each result at most
--max-lookup-bytes raw bytes (8 KiB) and all together at most
--max-step-bytes after JSON escaping (64 KiB). Failed lookups count; a
result over a bound fails with too_large. A call that would pass the count
is refused whole (exit 5) and nothing is looked up. Without --step, one
invocation is one step; --step S carries the budget across invocations in
the run's ledger .steps/S.json. On a store that cannot be written (a
read-only mount or snapshot) --step S counts for this call alone, from
what the ledger recorded, and says so on stderr.

Example:
   retval resolve --run "$RUN" c1 --lines 120-160
   retval resolve --run "$RUN" c2 --pointer /packages/0/version --step "$STEP"
   retval resolve --run "$RUN" c2 --outline /packages
   retval resolve --run "$RUN" c3 --lines 12 --pointer /Output
   echo '[{"$ref": "c1", "lines": [1, 5]}, {"$list_results": 0}]' | retval resolve --run "$RUN" --batch

Exit status: 0 printed (with --batch or --json: every reference answered,
failed or not), 1 I/O error or corrupt value (a step ledger that is a
symlink, a FIFO or a device is corrupt and never read), 2 usage (two of
--bytes, --lines and --pointer, or --as without --pointer, among others),
3 unknown reference or collected run, 5 lookup budget exhausted, 7 invalid
reference (invalid_range, not_json, ambiguous_json, digest_mismatch,
not_string, not_utf8, bad_pointer, bad_reference, too_large).`,
		Flags: append(globalFlags("max-lookups", "max-lookup-bytes", "max-step-bytes"),
			&cli.StringFlag{Name: "bytes", Usage: "half-open byte range A-B (bytes A up to, not including, B), N- (to the end) or -N (the last N)", Action: setTo(&o.bytes)},
			&cli.StringFlag{Name: "lines", Usage: "inclusive line range A-B counting from 1, N (one line), N- (to the end) or -N (the last N)", Action: setTo(&o.lines)},
			&cli.StringFlag{Name: "pointer", Usage: "RFC 6901 JSON pointer, e.g. /packages/0/name (\"\" is the whole document)", Action: setTo(&o.pointer)},
			&optionalFlag{&cli.StringFlag{Name: "outline", Usage: "list the members or elements of the JSON value at this pointer (\"\": the whole document)", Action: setTo(&o.outline)}, isPointerArg},
			&cli.Int64Flag{Name: "after", Usage: "with --outline: list from the position after this one (the paging flag)", Action: setTo(&o.after)},
			&cli.StringFlag{Name: "as", Usage: "with --pointer: lexeme (the value's bytes, default) or string (a string's decoded text)", Action: setTo(&o.as)},
			&cli.StringFlag{Name: "sha256", Usage: "fail unless the value's SHA-256 is this (64 hex digits, from its stub)", Action: setTo(&o.sha256)},
			&cli.StringFlag{Name: "step", Usage: "step id whose lookup budget this call spends, kept across calls", Action: setTo(&o.step)},
			&cli.BoolFlag{Name: "batch", Usage: "read a JSON array of references from stdin; print one JSON result per line", Destination: &o.batch},
		),
		Action: action(&o.opts, func(e *env) error { return runResolve(e, &o) }),
	}
}

// selection is the flags that make a single reference, as given.
func (o *resolveOptions) selection() []flagGiven {
	return []flagGiven{{"bytes", o.bytes != nil}, {"lines", o.lines != nil}, {"pointer", o.pointer != nil},
		{"outline", o.outline != nil}, {"after", o.after != nil}, {"as", o.as != nil}, {"sha256", o.sha256 != nil}}
}

func runResolve(e *env, o *resolveOptions) error {
	r, run, err := o.settingsRun(e)
	if err != nil {
		return err
	}
	var calls []expand.Lookup
	if o.batch {
		for _, f := range o.selection() {
			if f.set {
				return usageErr("--batch reads every reference from stdin: --%s is not allowed with it", f.name)
			}
		}
		if len(o.args) > 0 {
			return usageErr("--batch reads every reference from stdin: no ID argument is allowed with it")
		}
		if calls, err = expand.ParseBatch(e.stdin); err != nil {
			return err
		}
	} else {
		if len(o.args) != 1 {
			return usageErr("want one value ID (as its stub shows it), e.g. retval resolve --run %s c1 --lines 1-40", run)
		}
		if err := o.checkSelection(); err != nil {
			return err
		}
		ref, err := o.ref(o.args[0])
		if retain.CodeOf(err) == retain.CodeUsage {
			return err
		}
		calls = []expand.Lookup{{Ref: ref, Err: err}}
	}

	// One reference printed to stdout is bytes, not a JSON string: it is
	// answered as the value holds it, UTF-8 or not.
	rs := &expand.Resolver{Store: logStore(r.Location(), e, "resolve"), Run: run, Raw: !o.batch && !r.JSON,
		StepInMemory: func(step string, why error) {
			fmt.Fprintf(e.stderr, "retval: resolve: warning: %v: step %q is counted for this call alone, from what its ledger recorded; nothing can carry it to the next call\n", why, step)
		}}
	budget := expand.BudgetOf(r.Limits)
	var answers []expand.Answer
	if o.step != nil {
		answers, err = rs.Step(*o.step, calls, budget)
	} else {
		answers, err = rs.Lookups(calls, budget, &expand.Spent{})
	}
	if err != nil {
		return err
	}
	if o.batch || r.JSON {
		for _, a := range answers {
			if err := writeJSON(e.stdout, a); err != nil {
				return err
			}
		}
		return nil
	}
	if a := answers[0]; a.Err != nil {
		return a.Err
	}
	_, err = e.stdout.Write(answers[0].Text)
	return err
}

// checkSelection refuses flags that make no one reference: two
// selections, or --as without a pointer to apply it to. These are mistakes
// on the command line, so usage errors naming the flags, not bad_reference.
func (o *resolveOptions) checkSelection() error {
	var set []string
	for _, f := range o.selection()[:4] { // bytes, lines, pointer, outline
		if f.set {
			set = append(set, "--"+f.name)
		}
	}
	if len(set) == 2 && o.lines != nil && o.bytes == nil {
		set = nil // --lines N names the NDJSON line a pointer or outline reads in
	}
	if len(set) > 1 {
		named := strings.Join(set[:len(set)-1], ", ") + " and " + set[len(set)-1]
		return usageErr("%s select in different ways: give one of --bytes, --lines, --pointer and --outline (--lines N with --pointer or --outline reads in line N of an NDJSON value)", named)
	}
	if o.after != nil && o.outline == nil {
		return usageErr("--after pages through an outline: give --outline too, or leave --after out")
	}
	if o.as != nil && o.pointer == nil {
		return usageErr("--as says how to return what --pointer selects: give --pointer too, or leave --as out")
	}
	return nil
}

// ref builds the reference the selection flags describe, through the
// same checks as a JSON reference. A malformed range is a usage error.
func (o *resolveOptions) ref(id string) (expand.Ref, error) {
	f := expand.RefFields{ID: &id, Pointer: o.pointer, As: o.as, SHA256: o.sha256, Outline: o.outline, After: o.after}
	if o.bytes != nil {
		r, err := peek.ParseBytes(*o.bytes)
		if err != nil {
			return expand.Ref{}, err
		}
		f.Bytes = &r
	}
	if o.lines != nil {
		r, err := peek.ParseLines(*o.lines)
		if err != nil {
			return expand.Ref{}, err
		}
		f.Lines = &r
	}
	return f.Ref()
}
