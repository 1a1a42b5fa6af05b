package cmd

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/retval/retval/internal/human"
	"github.com/retval/retval/internal/iox"
	"github.com/retval/retval/pkg/retain"
	"github.com/urfave/cli/v3"
)

func init() { register("catalogue", catalogueCommand) }

// catalogueOptions are catalogue's flags.
type catalogueOptions struct {
	opts
	page, pageSize int
	paged          bool // --page or --page-size given
	all            bool
}

func catalogueCommand() *cli.Command {
	var o catalogueOptions
	return &cli.Command{
		Name:      "catalogue",
		Usage:     "list what a run keeps, or every run",
		UsageText: "retval catalogue --run R [--page N] [--page-size K] [--json]\nretval catalogue --all [--grace DUR] [--json]",
		Description: `Prints a page of a run's values, oldest first: id, tool, size, lines,
completeness, creation time and SHA-256, then the flag that shows the next
page. Pages count from 0. --json prints exactly what the reference
{"$list_results": N} returns: {"run", "page", "total", "next", "values"}.

--all prints one row per run instead: its values, bytes on disk (as du -sb
counts), last activity (newest write or read stamp), and whether it is
active (a writer holds its lock, or its last activity is within --grace,
so gc would not touch it). --json: {"runs": [{"run", "values", "bytes",
"last_activity", "active"}]}. Human tables humanise sizes; --json never does.

Example:
   retval catalogue --run "$RUN" --page 1
   retval catalogue --all --json | jq '.runs[] | select(.active | not) | .run'

Exit status: 0 listed, 1 I/O error (or no runs-dir, with --all), 2 usage,
3 unknown or collected run.`,
		Flags: append(globalFlags("grace"),
			&cli.IntFlag{Name: "page", Usage: "page to show, from 0", Destination: &o.page, Action: mark[int](&o.paged)},
			&cli.IntFlag{Name: "page-size", Value: retain.DefaultPageSize, Usage: "values per page", Destination: &o.pageSize, Action: mark[int](&o.paged)},
			&cli.BoolFlag{Name: "all", Usage: "one row per run instead of a run's values", Destination: &o.all},
		),
		Action: action(&o.opts, func(e *env) error { return runCatalogue(e, &o) }),
	}
}

func runCatalogue(e *env, o *catalogueOptions) error {
	r, err := o.settings(e)
	if err != nil {
		return err
	}
	if len(o.args) > 0 {
		return usageErr("catalogue takes no arguments, got %q (the run goes in --run)", o.args[0])
	}
	now, err := clock()
	if err != nil {
		return err
	}
	store := openStore(r.Location(), now)
	if o.all {
		if o.paged {
			return usageErr("--all lists runs, not pages: drop --page and --page-size")
		}
		runs, err := store.Runs(r.Limits.Effective().Grace)
		if err != nil {
			return err
		}
		if r.JSON {
			if runs == nil {
				runs = []*retain.RunInfo{}
			}
			return writeJSON(e.stdout, map[string]any{"runs": runs})
		}
		return printRuns(e.stdout, runs, now())
	}
	run, err := needRun(r)
	if err != nil {
		return err
	}
	if o.page < 0 {
		return usageErr("--page %d: pages count from 0", o.page)
	}
	if o.pageSize < 1 {
		return usageErr("--page-size %d: want at least 1", o.pageSize)
	}
	// What is printed, or the error, is accounted for in the read log.
	store.OnLogError = logStore(r.Location(), e, "catalogue").OnLogError
	stdout := &iox.CountingWriter{W: e.stdout}
	err = printCatalogue(stdout, store, run, o.page, o.pageSize, r.JSON)
	store.LogCall(run, "", "catalogue", stdout.N, err)
	return err
}

func printCatalogue(w io.Writer, store *retain.Store, run string, page, size int, asJSON bool) error {
	p, err := store.CataloguePage(run, page, size)
	if err != nil {
		return err
	}
	if asJSON {
		b, err := retain.MarshalPage(p)
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}
	return printPage(w, p, size)
}

func printPage(w io.Writer, p *retain.Page, size int) error {
	var b strings.Builder
	if len(p.Values) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tTOOL\tSIZE\tLINES\tCOMPLETE\tCREATED\tSHA256")
		for _, d := range p.Values {
			tool := d.Tool
			if tool == "" {
				tool = "-"
			}
			// The tool name is the harness's text: escape what a terminal
			// would act on, so it can neither drive the terminal nor
			// break the table's rows and columns.
			if strings.ContainsFunc(tool, func(r rune) bool { return !unicode.IsPrint(r) }) {
				q := strconv.Quote(tool)
				tool = q[1 : len(q)-1]
			}
			complete := "yes"
			if !d.Complete {
				complete = "partial"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", d.ID, tool, human.IBytes(uint64(d.Size)), d.Lines,
				complete, d.Created.UTC().Format(time.RFC3339), d.SHA256)
		}
		tw.Flush()
	}
	first := p.Page*size + 1
	switch {
	case p.Total == 0:
		fmt.Fprintf(&b, "[run %s holds no values]\n", p.Run)
	case len(p.Values) == 0:
		fmt.Fprintf(&b, "[page %d is past the end: %d values in %d pages, from 0]\n", p.Page, p.Total, (p.Total+size-1)/size)
	case p.Next != nil:
		fmt.Fprintf(&b, "[page %d: values %d-%d of %d; next: --page %d]\n", p.Page, first, first+len(p.Values)-1, p.Total, *p.Next)
	default:
		fmt.Fprintf(&b, "[page %d: values %d-%d of %d; last page]\n", p.Page, first, first+len(p.Values)-1, p.Total)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func printRuns(w io.Writer, runs []*retain.RunInfo, now time.Time) error {
	var b strings.Builder
	if len(runs) == 0 {
		b.WriteString("[no runs]\n")
	} else {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "RUN\tVALUES\tSIZE\tLAST ACTIVITY\tACTIVE")
		var values int
		var bytes int64
		for _, r := range runs {
			if r.Refused != "" {
				fmt.Fprintf(tw, "%s\t-\t-\t-\trefused: %s\n", r.Run, oneLine(r.Refused))
				continue
			}
			active := "no"
			switch {
			case r.Busy:
				active = "yes (writing)"
			case r.Active:
				active = "yes"
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s (%s)\t%s\n", r.Run, r.Values, human.IBytes(uint64(r.Bytes)),
				r.LastActivity.UTC().Format(time.RFC3339), human.RelTime(r.LastActivity, now, "ago", "from now"), active)
			values += r.Values
			bytes += r.Bytes
		}
		tw.Flush()
		fmt.Fprintf(&b, "[%d %s, %d %s, %s]\n", len(runs), plural(len(runs), "run", "runs"), values, plural(values, "value", "values"), human.IBytes(uint64(bytes)))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
