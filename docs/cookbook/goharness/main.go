// Command goharness is a Go harness using retval's packages directly, with
// no retval process: retain each tool result and show the model what
// retain gives back, answer the model's lookups under a step budget, and
// read a page of a value as peek prints it.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/retval/retval/pkg/expand"
	"github.com/retval/retval/pkg/peek"
	"github.com/retval/retval/pkg/retain"
)

func main() {
	runsDir := flag.String("runs-dir", "runs", "directory holding the runs")
	session := flag.String("run", "session-1", "run id: one per agent session")
	flag.Parse()
	if err := run(os.Stdout, *runsDir, *session); err != nil {
		fmt.Fprintln(os.Stderr, "goharness:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, runsDir, session string) error {
	store := retain.Open(runsDir)
	// A harness lives as long as its session: it keeps the small values it
	// has read and checked, and reads one again only when its files change.
	store.Cache = retain.NewValueCache(retain.DefaultValueCacheBytes)
	limits := retain.DefaultLimits() // or from your own configuration

	// 1. A tool result: retain it and give the model what comes back.
	output, status := numbers(50000), 0
	var seen bytes.Buffer
	res, err := store.Retain(strings.NewReader(output), &seen, retain.RetainOptions{
		Run: session, Call: "toolu_02", Limits: limits,
		Meta: retain.Meta{Tool: "numbers", ExitCode: &status},
	})
	if err != nil {
		return err // e.g. a conflict: this call id already holds other bytes
	}
	if !res.Verbatim {
		seen.WriteString(res.Stub) // small outputs were written to seen as they are
	}
	if res.Warning != nil {
		fmt.Fprintln(os.Stderr, "not retained:", res.Warning) // the model saw the whole output
	}
	fmt.Fprintf(w, "the model sees %d bytes of a %d-byte result:\n%s\n", seen.Len(), len(output),
		strings.SplitN(seen.String(), "\n", 2)[0])

	// 2. The model's lookups in one turn: parse its references, answer them
	// under the turn's budget. A failed lookup is an answer too.
	calls, err := expand.ParseBatch(strings.NewReader(
		`[{"$ref": "toolu_02", "lines": [100, 102]}, {"$ref": "toolu_02", "bytes": [0, 99999]}]`))
	if err != nil {
		return err
	}
	rs := &expand.Resolver{Store: store, Run: session}
	answers, err := rs.Step("turn-1", calls, expand.BudgetOf(limits))
	if err != nil {
		return err // budget_exhausted: the whole call is refused
	}
	for _, a := range answers {
		if a.Err != nil {
			fmt.Fprintf(w, "lookup failed (%s): %v\n", retain.CodeOf(a.Err), a.Err)
			continue
		}
		fmt.Fprintf(w, "lookup: %q\n", a.Text)
	}

	// 3. A page as `retval peek` prints it, gutters and trailer included.
	v, err := store.OpenValue(session, "toolu_02")
	if err != nil {
		return err
	}
	defer v.Close()
	caps, err := peek.CapsFor(limits, false)
	if err != nil {
		return err
	}
	page, err := peek.Query(v, peek.QueryOptions{Query: "4999", AfterLine: 49990}, caps)
	if err != nil {
		return err
	}
	_, err = w.Write(page.Render())
	return err
}

// numbers stands in for a tool: lines 1 to n.
func numbers(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}
