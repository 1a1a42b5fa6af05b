package peek_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/retval/retval/pkg/peek"
	"github.com/retval/retval/pkg/retain"
)

// retainLog retains a 1000-line log as value "build" of run "run-1" and
// returns the store.
func retainLog(dir string) *retain.Store {
	store := retain.Open(filepath.Join(dir, "runs"))
	var b strings.Builder
	for i := 1; i <= 1000; i++ {
		if i%250 == 0 {
			fmt.Fprintf(&b, "FAIL: TestPart%d\n", i/250)
			continue
		}
		fmt.Fprintf(&b, "ok %d\n", i)
	}
	limits := retain.DefaultLimits()
	limits.Threshold = retain.Unlimited // retain everything
	if _, err := store.Retain(strings.NewReader(b.String()), os.Stdout,
		retain.RetainOptions{Run: "run-1", Call: "build", Limits: limits}); err != nil {
		panic(err)
	}
	return store
}

// Retain, then peek at a line range: the page has the read_file gutter.
func ExampleLines() {
	dir, _ := os.MkdirTemp("", "retval-example-")
	defer os.RemoveAll(dir)
	store := retainLog(dir)

	v, err := store.OpenValue("run-1", "build")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer v.Close()
	page, err := peek.Lines(v, 248, 251, peek.DefaultCaps)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s", page.Render())
	fmt.Println(page.Total, "lines in all")
	// Output:
	// 248: ok 248
	// 249: ok 249
	// 250: FAIL: TestPart1
	// 251: ok 251
	// 1000 lines in all
}

// A search prints the matching lines and a last line with the total.
func ExampleQuery() {
	dir, _ := os.MkdirTemp("", "retval-example-")
	defer os.RemoveAll(dir)
	store := retainLog(dir)

	v, err := store.OpenValue("run-1", "build")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer v.Close()
	page, err := peek.Query(v, peek.QueryOptions{Query: "FAIL:"}, peek.DefaultCaps)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s", page.Render())
	// Output:
	// 250: FAIL: TestPart1
	// 500: FAIL: TestPart2
	// 750: FAIL: TestPart3
	// 1000: FAIL: TestPart4
	// [4 matches; shown 1-4]
}

// A model pastes peeked lines into an edit; StripGutter gives back the
// value's text.
func ExampleStripGutter() {
	fmt.Printf("%q\n", peek.StripGutter("249: ok 249\n250: FAIL: TestPart1\n"))
	// Output:
	// "ok 249\nFAIL: TestPart1\n"
}
