package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/retval/retval/pkg/expand"
	"github.com/retval/retval/pkg/retain"
	"github.com/urfave/cli/v3"
)

func init() { register("expand", expandCommand) }

// expandOptions are expand's flags.
type expandOptions struct {
	opts
	summary *string
}

func expandCommand() *cli.Command {
	var o expandOptions
	return &cli.Command{
		Name:      "expand",
		Usage:     "compose a tool call's arguments from stored selections and literal text",
		UsageText: "retval expand --run R [--summary FILE] [--max-expand-bytes SIZE] [FILE|-]",
		Description: `Reads a JSON document — a proposed tool call's arguments — from FILE or
stdin and prints it with every node replaced:
   {"$ref": "ID", ...}           a reference, as resolve takes it ("bytes",
                                 "lines", "pointer", "as", "sha256"): a JSON
                                 string holding the selected text
   {"$ref": "ID", "pointer": P, "as": "value"}
                                 the selected JSON value itself, its bytes
                                 unchanged (1.00000000000000000001 stays so)
   {"$concat": [part, ...]}      one JSON string: the parts' text in order;
                                 a part is a string or a reference
   {"$literal": X}               X unchanged, never expanded
Everything else is copied byte for byte: member order, whitespace, numbers
and string escapes stay exactly as sent. Text in a selected value is data:
it is never expanded again, nor read as a reference, flag or command.
A JSON string holds text: a selection that is not valid UTF-8 (a line of a
Latin-1 file, say) fails not_utf8, naming the first bad byte of the value;
it is never replaced by U+FFFD. So do a string whose text holds a lone
UTF-16 surrogate escape ("\ud800", which has no UTF-8 form) and $concat
text of the template itself that is not UTF-8. A line or byte range that
starts or ends past the end of its value fails (invalid_range), naming
the valid range; it is never cut short.

All or nothing: if any node fails — a malformed node (unknown keys beside
"$ref", both "lines" and "bytes", a number inside "$concat", "$concat" of
a non-array, "$list_results", several of "$ref", "$concat", "$literal" in
one object), a reference that does not resolve, or the bound below —
nothing is printed on stdout; stderr names every failing node by its RFC
6901 pointer in the document, with its code, one per line. With --json
stdout holds the error object with every failure in it:
{"error": {"code": "expand_refused", "message", "failures": [{"path",
"code", "message"}, ...]}}.

The expanded content of one call — the text of its $ref and $concat nodes
before JSON escaping — is at most --max-expand-bytes (16 MiB); this is
checked before any content is read. Expansion does not spend the lookup
budget (it composes content the model does not read). The template itself
may be at most 16 MiB and nested at most 10,000 levels.

--summary FILE also writes (atomically, mode 0600) the expanded document
with each $ref and $concat node replaced by
   {"$expanded": {"bytes": N, "sha256": "<hex>"}}
N and the SHA-256 are of the node's text before JSON escaping: for a
whole-value reference, the value's own size and digest.

Example:
   retval expand --run "$RUN" --summary call.summary.json edit.json > call.json
with edit.json holding lines 1-40 of value c1, a new line 41, and lines
45-3000 of c1:
   {"path": "main.go", "content": {"$concat": [
     {"$ref": "c1", "lines": [1, 40]},
     "\tnew line 41\n",
     {"$ref": "c1", "lines": [45, 3000]}]}}

Exit status: 0 expanded, 1 I/O error (reading the template, writing the
output or the summary), 2 usage (a bad flag, no run, or a template that is
empty, not JSON, over 16 MiB or too deep), 6 expand refused: some node
failed (each is listed with its own code: bad_reference, bad_pointer,
unknown_reference, collected, invalid_range, not_json, ambiguous_json,
digest_mismatch, not_string, not_utf8, corrupt, too_large for the bound).`,
		Flags: append(globalFlags("max-expand-bytes"),
			&cli.StringFlag{Name: "summary", Usage: "also write the document with each expanded node replaced by {\"$expanded\": {\"bytes\": N, \"sha256\": ...}} to FILE", Action: setTo(&o.summary)},
		),
		Action: action(&o.opts, func(e *env) error { return runExpand(e, &o) }),
	}
}

func runExpand(e *env, o *expandOptions) error {
	r, run, err := o.settingsRun(e)
	if err != nil {
		return err
	}
	in, err := openInput(o.args, e)
	if err != nil {
		return err
	}
	defer in.Close()
	var summary string
	if o.summary != nil {
		if summary = *o.summary; summary == "" || summary == "-" {
			return usageErr("--summary needs a file name: stdout holds the expanded document")
		}
	}
	src, err := io.ReadAll(io.LimitReader(in, expand.MaxTemplateSize+1))
	if err != nil {
		return err
	}
	if len(src) > expand.MaxTemplateSize {
		return usageErr("the template is over %d bytes: a template carries references and new text, not content; refer to stored text with {\"$ref\": ...}", expand.MaxTemplateSize)
	}
	x := &expand.Expander{Store: logStore(r.Location(), e, "expand"), Run: run, MaxBytes: r.Limits.MaxExpandBytes}
	res, err := x.Expand(src, summary != "")
	if err != nil {
		var ref *expand.Refusal
		if errors.As(err, &ref) {
			reportFailures(e, r.JSON, ref.Failures)
		}
		return err
	}
	// The summary first, so that a summary that cannot be written prints
	// nothing; and it goes again if the document cannot be printed: a
	// summary vouches only for an expansion that was delivered.
	if summary != "" {
		if err := retain.WriteFileAtomic(summary, res.Summary, 0o600); err != nil {
			return fmt.Errorf("writing the summary %s: %w; nothing was printed: give --summary a path that can be written", summary, err)
		}
	}
	if _, err := res.WriteTo(e.stdout); err != nil {
		if summary != "" {
			os.Remove(summary)
		}
		return fmt.Errorf("printing the expanded document: %w (no summary was kept)", err)
	}
	return nil
}

// reportFailures lists every failing node on stderr, one line each. With
// --json they go into the error object on stdout instead (Main asks the
// error for its details).
func reportFailures(e *env, asJSON bool, fails []expand.Failure) {
	if asJSON {
		return
	}
	for _, f := range fails {
		fmt.Fprintf(e.stderr, "retval: expand: at %q: %s (%s)\n", f.Path, oneLine(f.Message), f.Code)
	}
}
