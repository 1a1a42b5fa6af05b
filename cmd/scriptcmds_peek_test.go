package cmd

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/retval/retval/pkg/peek"
	"github.com/retval/retval/pkg/retain"
	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
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
		s := retain.Open(ts.Getenv("RETVAL_RUNS_DIR"))
		id, err := retain.Sanitize(args[0])
		ts.Check(err)
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
