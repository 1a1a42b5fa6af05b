package cmd

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/retval/retval/internal/human"
	"github.com/retval/retval/pkg/config"
	"github.com/retval/retval/pkg/stats"
	"github.com/urfave/cli/v3"
)

func init() { register("stats", statsCommand) }

// statsOptions are stats's flags.
type statsOptions struct {
	opts
	all                 bool
	by                  string
	since, callOverhead *string
}

func statsCommand() *cli.Command {
	var o statsOptions
	return &cli.Command{
		Name:      "stats",
		Usage:     "what retention kept out of the model's context, and what reading back cost",
		UsageText: "retval stats [--run R | --all] [--since DUR] [--by tool|run|value] [--call-overhead BYTES] [--json]",
		Description: `Sums the read log of a run (or, with --all, of every run, in one pass):
every command that shows a model or a person bytes from a run records them
there. It reports

   retained        values kept, and their bytes
   stubs           what the model was shown instead of them
   lookups         calls made to read values back (peek, resolve, lists,
                   catalogue, the MCP tools), lookups in them, bytes
                   returned, failures and calls the budget refused
   call overhead   --call-overhead bytes for each call (default 300): the
                   model writes the call and reads the result's envelope
   kept out        retained - stubs - lookups - overhead, and the ratio
                   retained / (stubs + lookups + overhead)

and, outside the net, verbatim results (the same with or without retval),
results capacity kept from being retained, and expand's composed bytes
(arguments the model did not have to write). Token figures are estimates,
bytes / 4, and say so; no tokenizer is run and billed tokens are never
claimed. --since DUR counts only records at most DUR old; --by groups the
figures by the tool that made the value, by run or by value, most kept out
first. --json prints the report as one object, exact numbers only (see
docs/EFFICIENCY.md for every field).

Example:
   retval stats --run "$RUN"
   retval stats --all --since 7d --by tool
   retval stats --all --json | jq .total.kept_out_bytes

Exit status: 0 printed, 1 I/O error, 2 usage, 3 unknown or collected run.`,
		Flags: append(globalFlags(),
			&cli.BoolFlag{Name: "all", Usage: "sum the read logs of every run", Destination: &o.all},
			&cli.StringFlag{Name: "since", Usage: "count only records at most DUR old (e.g. 1h, 7d)", Action: setTo(&o.since)},
			&cli.StringFlag{Name: "by", Usage: "group by tool (that made the value), run or value", Destination: &o.by},
			&cli.StringFlag{Name: "call-overhead", Usage: "bytes a model pays for each call besides its result (0: none)", DefaultText: strconv.Itoa(stats.DefaultCallOverhead), Action: setTo(&o.callOverhead)},
		),
		Action: action(&o.opts, func(e *env) error { return runStats(e, &o) }),
	}
}

func runStats(e *env, so *statsOptions) error {
	r, err := so.settings(e)
	if err != nil {
		return err
	}
	if len(so.args) > 0 {
		return usageErr("stats takes no arguments, got %q (the run goes in --run)", so.args[0])
	}
	now, err := clock()
	if err != nil {
		return err
	}
	o := stats.Options{Store: openStore(r.Location(), now), All: so.all, By: stats.By(so.by)}
	switch {
	case o.All && r.Values["run"].Source == config.FromFlag:
		return usageErr("--run and --all exclude each other: give one")
	case !o.All:
		if o.Run, err = needRun(r); err != nil {
			return usageErr("no run given: use --run R, set RETVAL_RUN, or sum every run with --all")
		}
	}
	switch o.By {
	case stats.ByNone, stats.ByTool, stats.ByRun, stats.ByValue:
	default:
		return usageErr("--by %q: want tool, run or value", so.by)
	}
	if so.since != nil {
		if o.Since, err = config.ParseDuration(*so.since); err != nil || o.Since <= 0 {
			return usageErr("--since %q: want a positive duration such as 1h, 7d or 2w", *so.since)
		}
	}
	if so.callOverhead != nil {
		n, err := config.ParseSize(*so.callOverhead)
		if err != nil || n < 0 {
			return usageErr("--call-overhead %q: want a size in bytes, such as 256 or 1KiB (0: none)", *so.callOverhead)
		}
		o.CallOverhead = n
		if n == 0 {
			o.CallOverhead = -1 // none
		}
	}
	rep, err := stats.Compute(o)
	if err != nil {
		return err
	}
	if r.JSON {
		return writeJSON(e.stdout, rep)
	}
	return printStats(e.stdout, rep)
}

// printStats prints the report as a small aligned table.
func printStats(w io.Writer, rep *stats.Report) error {
	var b strings.Builder
	t := rep.Total
	scope := "run " + string(rep.Run)
	if rep.Run == "" {
		scope = fmt.Sprintf("%d %s", rep.Runs, plural(rep.Runs, "run", "runs"))
	}
	if rep.Since != "" {
		scope += ", the last " + rep.Since
	}
	fmt.Fprintf(&b, "%s: %d %s retained, %d %s to read them back\n", scope, t.Values, plural(int(t.Values), "value", "values"), t.Calls, plural(int(t.Calls), "call", "calls"))
	if rep.By != stats.ByNone {
		printRows(&b, rep)
	} else {
		tab := [][]string{
			{"", "COUNT", "BYTES", ""},
			{"retained", num(t.Values), size(t.RetainedBytes), ""},
			{"stubs shown instead", num(t.Values), size(t.StubBytes), ""},
			{"lookups", num(t.Lookups), size(t.LookupBytes), lookupNote(t)},
			{"call overhead", num(t.Calls), size(t.OverheadBytes), fmt.Sprintf("%d bytes a call", rep.CallOverhead)},
			{"kept out of context", "", signedSize(t.KeptOut), ratio(t) + fmt.Sprintf(", ≈ %s tokens (estimate: bytes ÷ 4)", num(rep.Tokens.KeptOut))},
			{"verbatim results", num(t.Verbatim), size(t.VerbatimBytes), "passed through: the same without retval"},
			{"not retained (capacity)", num(t.Previews), size(t.PreviewSize), previewNote(t)},
			{"composed by expand", num(t.Compositions), size(t.ComposedBytes), "arguments the model did not write"},
			{"output saved by references", num(t.References), signedSize(t.OutputSaved), referenceNote(t)},
		}
		table(&b, tab, []bool{false, true, true, false})
	}
	if rep.Malformed > 0 {
		fmt.Fprintf(&b, "[%d malformed log lines skipped: retval verify names them]\n", rep.Malformed)
	}
	for _, p := range rep.Refused {
		fmt.Fprintf(&b, "[run %s not counted: %s]\n", p.Run, oneLine(p.Message))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func printRows(b *strings.Builder, rep *stats.Report) {
	head := strings.ToUpper(string(rep.By))
	tab := [][]string{{head, "VALUES", "RETAINED", "STUBS", "CALLS", "LOOKUP BYTES", "OVERHEAD", "KEPT OUT", "RATIO"}}
	row := func(key string, l stats.Ledger) []string {
		return []string{key, num(l.Values), size(l.RetainedBytes), size(l.StubBytes), num(l.Calls), size(l.LookupBytes),
			size(l.OverheadBytes), signedSize(l.KeptOut), ratio(l)}
	}
	for _, l := range rep.Rows {
		tab = append(tab, row(printable(l.Key), l))
	}
	tab = append(tab, row("total", rep.Total))
	table(b, tab, []bool{false, true, true, true, true, true, true, true, true})
	fmt.Fprintf(b, "≈ %s tokens kept out (estimate: bytes ÷ 4); call overhead %d bytes a call\n", num(rep.Tokens.KeptOut), rep.CallOverhead)
}

// referenceNote says what the references of tool calls stood for.
func referenceNote(t stats.Ledger) string {
	if t.References == 0 {
		return "tool calls whose $expand: references a hook or the proxy expanded"
	}
	return fmt.Sprintf("the model wrote %s of references for %s of tool input", size(t.ReferenceBytes), size(t.ReferencedBytes))
}

// printable escapes what a terminal would act on in a key (a tool name is
// the harness's text).
func printable(s string) string {
	q := strconv.Quote(s)
	if q[1:len(q)-1] != s {
		return q[1 : len(q)-1]
	}
	return s
}

// table writes rows with aligned columns, right-aligned where right says.
func table(b *strings.Builder, rows [][]string, right []bool) {
	width := make([]int, len(right))
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		var line strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				line.WriteString("  ")
			}
			if right[i] {
				line.WriteString(pad + c)
			} else if i < len(r)-1 {
				line.WriteString(c + pad)
			} else {
				line.WriteString(c)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

func num(n int64) string { return human.Comma(n) }

// signedSize humanises a byte count, negative ones too.
func signedSize(n int64) string {
	if n < 0 {
		return "-" + human.IBytes(uint64(-n))
	}
	return human.IBytes(uint64(n))
}

func ratio(l stats.Ledger) string {
	if l.Ratio == nil {
		return "-"
	}
	return strconv.FormatFloat(*l.Ratio, 'f', 1, 64) + "×"
}

func lookupNote(l stats.Ledger) string {
	var parts []string
	if l.Failures > 0 {
		parts = append(parts, fmt.Sprintf("%s failed", num(l.Failures)))
	}
	if l.Refused > 0 {
		parts = append(parts, fmt.Sprintf("%s %s refused by the budget", num(l.Refused), plural(int(l.Refused), "call", "calls")))
	}
	return strings.Join(parts, ", ")
}

func previewNote(l stats.Ledger) string {
	if l.Previews == 0 {
		return ""
	}
	return fmt.Sprintf("previews of %s shown, the rest dropped", size(l.PreviewBytes))
}
