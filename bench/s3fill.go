//go:build ignore

// s3fill fills the store $RETVAL_STORE (an s3:// address; the AWS
// variables say where and who) with RUNS runs of VALUES small values
// each, through the store's own Retain, 16 writers at once: what
// bench/s3.sh collects with gc.
//
//	go run bench/s3fill.go RUNS VALUES
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/retval/retval/pkg/retain"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: go run bench/s3fill.go RUNS VALUES")
		os.Exit(2)
	}
	runs, _ := strconv.Atoi(os.Args[1])
	values, _ := strconv.Atoi(os.Args[2])
	s := retain.Open(os.Getenv("RETVAL_STORE"))
	body := bytes.Repeat([]byte("a line of a tool result, kept for gc to collect\n"), 40)
	lim := retain.Limits{Threshold: retain.Unlimited, MaxRunValues: retain.Unlimited, MaxRunBytes: retain.Unlimited}
	jobs := make(chan [2]int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for range 16 {
		wg.Go(func() {
			for j := range jobs {
				_, err := s.Retain(bytes.NewReader(body), io.Discard, retain.RetainOptions{
					Run: fmt.Sprintf("run%04d", j[0]), Call: fmt.Sprintf("c%03d", j[1]), Limits: lim})
				if err != nil {
					mu.Lock()
					failed++
					mu.Unlock()
					fmt.Fprintln(os.Stderr, err)
				}
			}
		})
	}
	for r := range runs {
		for v := range values {
			jobs <- [2]int{r, v}
		}
	}
	close(jobs)
	wg.Wait()
	if failed > 0 {
		os.Exit(1)
	}
}
