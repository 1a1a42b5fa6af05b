package ui

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/retval/retval/internal/s3test"
	"github.com/retval/retval/pkg/retain"
)

// The speed goals of retval ui (issue 35): the first page of runs of a
// store of 10,000 within 100 ms, any page of a 1 GiB value within 50 ms.
// bench/ui.sh measures the same through the real command, with the
// server's memory; these time the handlers in process. The value is
// RETVAL_UI_BENCH_MIB MiB (default 64; 1024 for the goal's size).

var (
	benchOnce  sync.Once
	benchDir   string
	benchLines int64
)

// benchStore writes, once per process, 10,000 runs of 3 small values in
// the store's layout (as bench/gen.go store does: retaining them one by
// one would take minutes) and retains one large value in run "big".
func benchStore(b *testing.B) (string, int64) {
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "retval-ui-bench")
		if err != nil {
			panic(err)
		}
		benchDir = dir
		now := time.Now()
		body := []byte("a line of a small value that the benchmark keeps\n")
		for r := range 10_000 {
			run := fmt.Sprintf("run-%05d", r)
			rd := filepath.Join(dir, run+".values")
			must(os.MkdirAll(rd, 0o700))
			at := now.Add(-time.Duration(r) * time.Minute)
			for v := range 3 {
				id := "call-" + strconv.Itoa(v)
				sum := sha256.Sum256(body)
				meta, _ := json.Marshal(map[string]any{"id": id, "call_id": id, "run": run, "tool": "bench", "size": len(body),
					"lines": 1, "sha256": hex.EncodeToString(sum[:]), "utf8": true, "json": false, "complete": true,
					"timed_out": false, "created": at.UTC().Format(time.RFC3339), "compression": "none", "stored_bytes": len(body)})
				must(os.WriteFile(filepath.Join(rd, id+".txt"), body, 0o600))
				must(os.WriteFile(filepath.Join(rd, id+".meta.json"), meta, 0o600))
			}
			for _, f := range []string{".lock", ".activity"} {
				must(os.WriteFile(filepath.Join(rd, f), nil, 0o600))
				must(os.Chtimes(filepath.Join(rd, f), at, at))
			}
		}
		mib := 64
		if n, err := strconv.Atoi(os.Getenv("RETVAL_UI_BENCH_MIB")); err == nil && n > 0 {
			mib = n
		}
		pr, pw := io.Pipe()
		go func() {
			w := bufio.NewWriterSize(pw, 1<<20)
			var n int64
			for written := int64(0); written < int64(mib)<<20; {
				n++
				k, _ := fmt.Fprintf(w, "%09d GET /api/items?page=%d status=200 bytes=%d\n", n, n%977, n*7%100003)
				written += int64(k)
			}
			benchLines = n
			w.Flush()
			pw.Close()
		}()
		s := retain.Open(dir)
		l := retain.DefaultLimits()
		l.Threshold, l.MaxValueSize, l.MaxRunBytes = retain.Unlimited, retain.Unlimited, retain.Unlimited
		if _, err := s.Retain(pr, io.Discard, retain.RetainOptions{Run: "big", Call: "log", Limits: l}); err != nil {
			panic(err)
		}
	})
	return benchDir, benchLines
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// BenchmarkRunsFirstPage: a fresh server's first page of runs (50 of the
// 10,001), before its scan of the store has ended.
func BenchmarkRunsFirstPage(b *testing.B) {
	dir, _ := benchStore(b)
	for b.Loop() {
		srv, err := New(Options{Store: retain.Open(dir), Addr: testAddr, Token: "tok"})
		if err != nil {
			b.Fatal(err)
		}
		srv.beforeScan = func() { <-srv.stop } // the scan waits for the page, then gives up
		var p runsPage
		getJSON(b, srv, "/api/runs?limit=50", &p)
		if len(p.Rows) != 50 || p.Total != 10_001 {
			b.Fatalf("%d rows of %d", len(p.Rows), p.Total)
		}
		srv.Close()
	}
}

// BenchmarkRunsSortedPage: a page of runs sorted by last activity, once
// the store has been scanned.
func BenchmarkRunsSortedPage(b *testing.B) {
	dir, _ := benchStore(b)
	srv, err := New(Options{Store: retain.Open(dir), Addr: testAddr, Token: "tok"})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	var p runsPage
	getJSON(b, srv, "/api/runs?wait=1", &p)
	for b.Loop() {
		getJSON(b, srv, "/api/runs?limit=50&sort=activity&desc=1&offset=5000", &p)
		if p.Scanning || len(p.Rows) != 50 {
			b.Fatalf("%+v", p)
		}
	}
}

// BenchmarkValuePage: 200 lines (a page of the viewer) from anywhere in
// the large value, found through its line index.
func BenchmarkValuePage(b *testing.B) {
	dir, lines := benchStore(b)
	srv, err := New(Options{Store: retain.Open(dir), Addr: testAddr, Token: "tok"})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	var p linesPage
	i := int64(0)
	for b.Loop() {
		i++
		first := 1 + (i*7_919_981)%(lines-199)
		getJSON(b, srv, "/api/runs/big/values/log/lines?count=200&first="+strconv.FormatInt(first, 10), &p)
		if len(p.Lines) != 200 || p.Lines[0].N != first {
			b.Fatalf("page at %d: %d lines", first, len(p.Lines))
		}
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	s3test.StopShared()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}
