package expand_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/retval/retval/pkg/expand"
	"github.com/retval/retval/pkg/retain"
)

const lockfile = `{
  "name": "app",
  "packages": [
    {"name": "left-pad", "version": "1.3.0"},
    {"name": "big.js", "version": 6.20}
  ]
}
`

func retainJSON(dir string) *retain.Store {
	store := retain.Open(filepath.Join(dir, "runs"))
	limits := retain.DefaultLimits()
	limits.Threshold = retain.Unlimited
	if _, err := store.Retain(strings.NewReader(lockfile), os.Stdout,
		retain.RetainOptions{Run: "run-1", Call: "lock", Limits: limits}); err != nil {
		panic(err)
	}
	return store
}

// Resolve a JSON pointer: the selected value's original bytes (lexeme),
// or a string's decoded text.
func ExampleResolver_Open() {
	dir, _ := os.MkdirTemp("", "retval-example-")
	defer os.RemoveAll(dir)
	rs := &expand.Resolver{Store: retainJSON(dir), Run: "run-1"}

	for _, ref := range []string{
		`{"$ref": "lock", "pointer": "/packages/1/version"}`,
		`{"$ref": "lock", "pointer": "/packages/0/name", "as": "string"}`,
		`{"$ref": "lock", "pointer": "/packages/1"}`,
		`{"$ref": "lock", "lines": [2, 2]}`,
	} {
		r, err := expand.ParseRef([]byte(ref))
		if err != nil {
			fmt.Println(err)
			return
		}
		sel, err := rs.Open(r)
		if err != nil {
			fmt.Println(err)
			return
		}
		text, err := sel.Text(1 << 20)
		sel.Close()
		fmt.Printf("%q %v\n", text, err)
	}
	// Output:
	// "6.20" <nil>
	// "left-pad" <nil>
	// "{\"name\": \"big.js\", \"version\": 6.20}" <nil>
	// "  \"name\": \"app\",\n" <nil>
}

// Lookups under a step budget: the ledger in the run directory carries the
// budget across calls (and processes), so a model cannot read a value
// whole by asking in small pieces.
func ExampleResolver_Step() {
	dir, _ := os.MkdirTemp("", "retval-example-")
	defer os.RemoveAll(dir)
	rs := &expand.Resolver{Store: retainJSON(dir), Run: "run-1"}
	budget := expand.Budget{Lookups: 2, LookupBytes: 8 << 10, StepBytes: 64 << 10}

	calls, err := expand.ParseBatch(strings.NewReader(`[{"$ref": "lock", "pointer": "/name", "as": "string"}]`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := 1; i <= 3; i++ {
		answers, err := rs.Step("step-1", calls, budget)
		if err != nil {
			fmt.Printf("call %d: %v (%s)\n", i, err, retain.CodeOf(err))
			continue
		}
		fmt.Printf("call %d: %s\n", i, answers[0].Text)
	}
	// Output:
	// call 1: app
	// call 2: app
	// call 3: step "step-1" has 0 of its 2 lookups left and this call asks for 1; nothing was looked up: ask for fewer, or work with what the step has read (budget_exhausted)
}
