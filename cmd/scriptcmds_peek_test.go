package cmd

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retval/retval/pkg/peek"
	"github.com/retval/retval/pkg/retain"
	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	// RETVAL_TEST_TERMINAL=1 makes peek take its stdout for a terminal, as
	// an engineer's would be.
	real := isTerminal
	isTerminal = func(w io.Writer) bool { return os.Getenv("RETVAL_TEST_TERMINAL") == "1" || real(w) }

	// mixed FILE LINES: LINES deterministic log lines mixing ASCII and
	// multi-byte text ("000042 level=3 msg=日本語 …").
	scriptCmds["mixed"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 {
			ts.Fatalf("usage: mixed FILE LINES")
		}
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		words := []string{"GET", "POST", "résumé", "日本語", "ошибка", "ok", "timeout", "🙂"}
		var b bytes.Buffer
		x := uint32(1)
		for i := 1; i <= n; i++ {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			fmt.Fprintf(&b, "%06d level=%d msg=%s", i, x%5, words[x%uint32(len(words))])
			for k := range x % 7 {
				b.WriteString(" " + words[(x>>k)%uint32(len(words))])
			}
			b.WriteByte('\n')
		}
		ts.Check(os.WriteFile(ts.MkAbs(args[0]), b.Bytes(), 0o644))
	}
	// collect RUN: do to RUN (in $RETVAL_RUNS_DIR) what gc does: remove it
	// and leave a tombstone.
	scriptCmds["collect"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 1 {
			ts.Fatalf("usage: collect RUN")
		}
		id, err := retain.Sanitize(args[0])
		ts.Check(err)
		if ts.Getenv("RETVAL_STORE") != "" {
			collectObjects(ts, id)
			return
		}
		s := retain.Open(ts.Getenv("RETVAL_RUNS_DIR"))
		ts.Check(os.RemoveAll(s.RunDir(id)))
		ts.Check(s.WriteTombstone(retain.Tombstone{Run: id, Collected: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}))
	}
	// sizeat FILE MIN MAX: FILE holds between MIN and MAX bytes.
	scriptCmds["sizeat"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 3 {
			ts.Fatalf("usage: sizeat FILE MIN MAX")
		}
		fi, err := os.Stat(ts.MkAbs(args[0]))
		ts.Check(err)
		lo, _ := strconv.ParseInt(args[1], 10, 64)
		hi, _ := strconv.ParseInt(args[2], 10, 64)
		if in := fi.Size() >= lo && fi.Size() <= hi; in == neg {
			ts.Fatalf("%s holds %d bytes, want %d-%d", args[0], fi.Size(), lo, hi)
		}
	}
	// onelinejson FILE SIZE NEEDLE AT: write a minified JSON document of
	// exactly SIZE bytes on one line, records with multi-byte text, where
	// the string NEEDLE starts at byte AT.
	scriptCmds["onelinejson"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 4 {
			ts.Fatalf("usage: onelinejson FILE SIZE NEEDLE AT")
		}
		size, err := strconv.Atoi(args[1])
		ts.Check(err)
		at, err := strconv.Atoi(args[3])
		ts.Check(err)
		needle := args[2]
		b := []byte(`{"items":[`)
		record := func(i int) []byte {
			return fmt.Appendf(nil, `{"id":%d,"name":"résumé-日本-%06d","ok":%t},`, i, i, i%3 == 0)
		}
		// pad returns a record that takes exactly n bytes (n ≥ 12).
		pad := func(n int) []byte { return fmt.Appendf(nil, `{"pad":"%s"},`, strings.Repeat("x", n-11)) }
		i := 0
		for len(b)+len(record(i))+64 < at {
			b = append(b, record(i)...)
			i++
		}
		b = append(b, pad(at-len(b)-len(`{"error":"`))...)
		b = append(b, `{"error":"`+needle+`"},`...)
		for len(b)+len(record(i))+64 < size {
			b = append(b, record(i)...)
			i++
		}
		b = append(b, pad(size-len(b)-len(`{"end":1}]}`))...)
		b = append(b, `{"end":1}]}`...)
		if len(b) != size || string(b[at:at+len(needle)]) != needle {
			ts.Fatalf("onelinejson: built %d bytes, needle at %d", len(b), bytes.Index(b, []byte(needle)))
		}
		ts.Check(os.WriteFile(ts.MkAbs(args[0]), b, 0o644))
	}
	// stripgutter IN OUT: write IN without its gutters, as a harness's edit
	// tool does with a pasted peek.
	scriptCmds["stripgutter"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 {
			ts.Fatalf("usage: stripgutter IN OUT")
		}
		b, err := os.ReadFile(ts.MkAbs(args[0]))
		ts.Check(err)
		text := string(b)
		// Drop a continuation line: it is not part of the value.
		if i := strings.LastIndex(strings.TrimSuffix(text, "\n"), "\n["); i >= 0 {
			text = text[:i+1]
		}
		ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(peek.StripGutter(text)), 0o644))
	}
}

// countingWriter counts what is written to it and keeps a digest of it.
type countingWriter struct {
	n int64
	h hash.Hash
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return w.h.Write(p)
}

// TestPeekUncappedStreams: peek with its caps lifted (an engineer paging
// into less) writes a 24 MiB value exactly, with its gutters, and
// allocates far less than the value: the output is streamed, not built.
func TestPeekUncappedStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("retains a 24 MiB value")
	}
	dir := t.TempDir()
	var value bytes.Buffer
	for i := 1; value.Len() < 24<<20; i++ {
		fmt.Fprintf(&value, "%d %s\n", i, strings.Repeat("x", i%40))
	}
	file := filepath.Join(dir, "value.txt")
	if err := os.WriteFile(file, value.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	runs := "--runs-dir=" + filepath.Join(dir, "runs")
	var stderr bytes.Buffer
	if code := Main([]string{"retval", "retain", runs, "--run", "r", "--call", "v", "--threshold", "0",
		"--max-value-size", "0", "--max-run-bytes", "0", file}, nil, io.Discard, &stderr); code != 0 {
		t.Fatalf("retain: exit %d: %s", code, stderr.String())
	}
	want := sha256.New()
	wantN := int64(0)
	for i, line := range bytes.SplitAfter(value.Bytes(), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		g := strconv.Itoa(i+1) + ": "
		want.Write([]byte(g))
		want.Write(line)
		wantN += int64(len(g) + len(line))
	}
	out := &countingWriter{h: sha256.New()}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	code := Main([]string{"retval", "peek", runs, "--run", "r", "v",
		"--peek-lines", "0", "--peek-bytes", "0", "--threshold", "0"}, nil, out, &stderr)
	runtime.ReadMemStats(&after)
	if code != 0 {
		t.Fatalf("peek: exit %d: %s", code, stderr.String())
	}
	if out.n != wantN || !bytes.Equal(out.h.Sum(nil), want.Sum(nil)) {
		t.Errorf("peek wrote %d bytes, want %d (or other bytes)", out.n, wantN)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("a %d-byte value: %d bytes written, %d allocated", value.Len(), out.n, alloc)
	if alloc > 16<<20 {
		t.Errorf("peek allocated %d bytes for a %d-byte value, want < %d: the output is held in memory", alloc, value.Len(), 16<<20)
	}
}
