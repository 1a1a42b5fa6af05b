package stats

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/retval/retval/pkg/retain"
)

var t0 = time.Date(2030, 1, 2, 12, 0, 0, 0, time.UTC)

// store makes runs whose logs hold the given records (their runs exist).
func store(t testing.TB, logs map[retain.ID][]retain.Read) *retain.Store {
	t.Helper()
	s := retain.Open(t.TempDir())
	s.Now = func() time.Time { return t0 }
	for run, recs := range logs {
		if err := os.MkdirAll(s.RunDir(run), 0o700); err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			s.LogRead(run, r)
		}
	}
	return s
}

func logs() map[retain.ID][]retain.Read {
	return map[retain.ID][]retain.Read{
		"a": {
			{Time: t0.Add(-48 * time.Hour), Op: retain.OpStub, Via: "hook", Value: "c1", Size: 100_000, Bytes: 1_000, Tool: "Bash"},
			{Time: t0.Add(-48 * time.Hour), Op: retain.OpVerbatim, Via: "hook", Value: "c0", Size: 300, Bytes: 300, Tool: "Bash"},
			{Time: t0.Add(-time.Hour), Op: retain.OpRead, Via: "peek", Value: "c1", Bytes: 4_000, Call: true},
			{Time: t0.Add(-time.Hour), Op: retain.OpRead, Via: "resolve", Value: "c1", Bytes: 50, Call: true, Code: retain.CodeInvalidRange},
			{Time: t0.Add(-time.Hour), Op: retain.OpRead, Via: "resolve", Bytes: 600},
			{Time: t0.Add(-time.Hour), Op: retain.OpRefused, Via: "resolve", Bytes: 80, Call: true, Code: retain.CodeBudgetExhausted},
			{Time: t0.Add(-time.Hour), Op: retain.OpCompose, Via: "expand", Value: "c1", Bytes: 2_000},
			{Time: t0.Add(-time.Hour), Op: retain.OpReference, Via: "hook claude-code", Tool: "Write", Bytes: 60, Size: 10_048},
		},
		"b": {
			{Time: t0.Add(-time.Hour), Op: retain.OpStub, Via: "proxy", Value: "m1", Size: 10_000, Bytes: 500, Tool: "mcp__fs__read"},
			{Time: t0.Add(-time.Hour), Op: retain.OpPreview, Via: "proxy", Value: "m2", Size: 9_000, Bytes: 400, Tool: "mcp__fs__read"},
			{Time: t0.Add(-time.Minute), Op: retain.OpRead, Via: "retval_peek", Value: "m1", Bytes: 9_000, Call: true},
		},
	}
}

func TestRun(t *testing.T) {
	s := store(t, logs())
	rep, err := Compute(Options{Store: s, Run: "a"})
	if err != nil {
		t.Fatal(err)
	}
	got := rep.Total
	want := Ledger{Values: 1, RetainedBytes: 100_000, StubBytes: 1_000, Calls: 3, Lookups: 3, LookupBytes: 4_730,
		Failures: 1, Refused: 1, OverheadBytes: 3 * DefaultCallOverhead, Verbatim: 1, VerbatimBytes: 300,
		Compositions: 1, ComposedBytes: 2_000,
		References: 1, ReferenceBytes: 60, ReferencedBytes: 10_048, OutputSaved: 10_048 - 60}
	want.KeptOut = 100_000 - 1_000 - 4_730 - 3*DefaultCallOverhead
	if got.Ratio == nil || *got.Ratio != 100_000.0/float64(1_000+4_730+3*DefaultCallOverhead) {
		t.Errorf("ratio %v", got.Ratio)
	}
	got.Ratio = nil
	if got != want {
		t.Errorf("total\n got %+v\nwant %+v", got, want)
	}
	if rep.Tokens.KeptOut != EstimateTokens(want.KeptOut) || !rep.Tokens.Estimate || rep.Tokens.Method != "bytes/4" {
		t.Errorf("tokens %+v", rep.Tokens)
	}
	if rep.Runs != 1 || rep.Records != 8 || rep.Run != "a" {
		t.Errorf("runs %d records %d run %q", rep.Runs, rep.Records, rep.Run)
	}
}

func TestCallOverhead(t *testing.T) {
	s := store(t, logs())
	for _, c := range []struct{ given, want int64 }{{0, DefaultCallOverhead}, {-1, 0}, {1000, 1000}} {
		rep, err := Compute(Options{Store: s, Run: "a", CallOverhead: c.given})
		if err != nil {
			t.Fatal(err)
		}
		if rep.CallOverhead != c.want || rep.Total.OverheadBytes != 3*c.want {
			t.Errorf("overhead %d: counted %d a call, %d in all", c.given, rep.CallOverhead, rep.Total.OverheadBytes)
		}
	}
}

// TestSince: a window counts only its records, and a lookup in it still
// finds the tool of a value retained before it.
func TestSince(t *testing.T) {
	s := store(t, logs())
	rep, err := Compute(Options{Store: s, All: true, Since: 2 * time.Hour, By: ByTool})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Total.Values != 1 || rep.Total.RetainedBytes != 10_000 || rep.Total.Calls != 4 {
		t.Errorf("total %+v", rep.Total)
	}
	keys := map[string]Ledger{}
	for _, r := range rep.Rows {
		keys[r.Key] = r
	}
	if keys["Bash"].Calls != 2 || keys["Bash"].Values != 0 || keys["-"].Calls != 1 || keys["mcp__fs__read"].Lookups != 1 {
		t.Errorf("rows %+v", rep.Rows)
	}
}

func TestBy(t *testing.T) {
	s := store(t, logs())
	for by, want := range map[By][]string{
		ByRun:   {"a", "b"},
		ByTool:  {"Bash", "mcp__fs__read", "Write", "-"},
		ByValue: {"a/c1", "b/m1", "a/c0", "b/m2", "a/-"},
	} {
		rep, err := Compute(Options{Store: s, All: true, By: by})
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		var sum int64
		for _, r := range rep.Rows {
			keys = append(keys, r.Key)
			sum += r.KeptOut
		}
		if len(keys) != len(want) {
			t.Fatalf("by %s: rows %v, want %v", by, keys, want)
		}
		for i := range want {
			if keys[i] != want[i] {
				t.Errorf("by %s: rows %v, want %v (most kept out first)", by, keys, want)
				break
			}
		}
		if sum != rep.Total.KeptOut {
			t.Errorf("by %s: rows keep out %d, the total %d", by, sum, rep.Total.KeptOut)
		}
	}
	if _, err := Compute(Options{Store: s, All: true, By: "colour"}); retain.CodeOf(err) != retain.CodeUsage {
		t.Errorf("by colour: %v", err)
	}
}

// TestAllRefused: a run whose log is refused is listed, not counted, and
// the others are; a malformed line is skipped and counted.
func TestAllRefused(t *testing.T) {
	s := store(t, logs())
	p := filepath.Join(s.RunDir("b"), ".reads")
	os.Remove(p)
	os.Symlink("/dev/zero", p)
	f, _ := os.OpenFile(filepath.Join(s.RunDir("a"), ".reads"), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("not a record\n")
	f.Close()
	rep, err := Compute(Options{Store: s, All: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs != 1 || len(rep.Refused) != 1 || rep.Refused[0].Run != "b" || rep.Malformed != 1 || rep.Total.Values != 1 {
		t.Errorf("report %+v", rep)
	}
	if _, err := Compute(Options{Store: s, Run: "b"}); !errors.Is(err, retain.ErrCorrupt) {
		t.Errorf("one refused run: %v, want corrupt", err)
	}
}

func TestUnknownRun(t *testing.T) {
	s := store(t, logs())
	if _, err := Compute(Options{Store: s, Run: "zz"}); !errors.Is(err, retain.ErrNotFound) {
		t.Errorf("unknown run: %v", err)
	}
}
