package gc_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/retval/retval/pkg/gc"
	"github.com/retval/retval/pkg/retain"
)

// Plan a collection, look at it, then collect: a run idle longer than
// MaxAge goes, and a later lookup in it says "collected".
func ExampleMakePlan() {
	dir, _ := os.MkdirTemp("", "retval-example-")
	defer os.RemoveAll(dir)
	store := retain.Open(filepath.Join(dir, "runs"))
	limits := retain.DefaultLimits()
	limits.Threshold = retain.Unlimited
	for _, run := range []string{"old-run", "new-run"} {
		if _, err := store.Retain(strings.NewReader("some output\n"), os.Stdout,
			retain.RetainOptions{Run: run, Call: "c1", Limits: limits}); err != nil {
			fmt.Println(err)
			return
		}
	}
	// Age old-run by 60 days (gc reads activity from file times).
	old := time.Now().Add(-60 * 24 * time.Hour)
	filepath.Walk(filepath.Join(store.Dir, "old-run.values"), func(p string, _ os.FileInfo, _ error) error {
		return os.Chtimes(p, old, old)
	})

	opts := gc.Defaults() // MaxAge 30 days, Grace 1 hour
	plan, err := gc.MakePlan(store, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range plan.Remove {
		fmt.Printf("plan: remove %s (%s), %d value(s)\n", r.Run, r.Rule, r.Values)
	}

	report, err := gc.Collect(store, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("removed:", len(report.Removed), "kept:", report.RunsKept)
	_, err = store.OpenValue("old-run", "c1")
	fmt.Println(errors.Is(err, retain.ErrCollected))
	// Output:
	// plan: remove old-run (max-age), 1 value(s)
	// removed: 1 kept: 1
	// true
}
