//go:build ignore

// genreads writes a runs-dir whose runs hold read logs and nothing else,
// for timing retval stats: RUNS runs × VALUES values, each value with its
// stub record and READS lookups (peeks), written through the store's own
// LogRead, so the log is exactly what retval writes.
//
//	go run bench/genreads.go DIR RUNS VALUES READS
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/retval/retval/pkg/retain"
)

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: go run bench/genreads.go DIR RUNS VALUES READS")
		os.Exit(2)
	}
	runs, _ := strconv.Atoi(os.Args[2])
	values, _ := strconv.Atoi(os.Args[3])
	reads, _ := strconv.Atoi(os.Args[4])
	s := retain.Open(os.Args[1])
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return t0 }
	s.OnLogError = func(err error) { fmt.Fprintln(os.Stderr, err); os.Exit(1) }
	tools := []string{"Bash", "mcp__github__search_code", "mcp__filesystem__read_text_file", "Read"}
	for i := range runs {
		run := retain.ID(fmt.Sprintf("run-%05d", i))
		if err := os.MkdirAll(s.RunDir(run), 0o700); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for v := range values {
			id := retain.ID(fmt.Sprintf("toolu_%04d", v))
			s.LogRead(run, retain.Read{Op: retain.OpStub, Via: "hook", Value: id, Size: int64(20_000 + 997*v), Bytes: 1_100, Tool: tools[v%len(tools)]})
			for k := range reads {
				s.LogRead(run, retain.Read{Op: retain.OpRead, Via: "peek", Value: id, Bytes: int64(2_000 + 37*k), Call: true})
			}
		}
	}
}
