package retain

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retval/retval/internal/testenv"
)

// reads returns every record of run's read log.
func reads(t *testing.T, s *Store, run ID) ([]Read, ReadLogInfo) {
	t.Helper()
	var out []Read
	info, err := s.ScanReads(run, func(r *Read) { out = append(out, *r) })
	if err != nil {
		t.Fatalf("ScanReads: %v", err)
	}
	return out, info
}

// logErrors collects what a store says of its read log.
func logErrors(s *Store) *[]error {
	var errs []error
	var mu sync.Mutex
	s.OnLogError = func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }
	return &errs
}

func TestReadLogRoundTrip(t *testing.T) {
	s := Open(t.TempDir())
	now := time.UnixMilli(1_800_000_000_123)
	s.Now = func() time.Time { return now }
	retainAll(t, s, "r", "c1", []byte("a value\n"))
	errs := logErrors(s)
	long := strings.Repeat("é", 200) // 400 bytes: cut on a UTF-8 boundary
	in := []Read{
		{Op: OpRead, Via: "peek", Value: "c1", Bytes: 42, Call: true},
		{Op: OpRead, Via: "resolve", Value: "c1", Step: "s-1", Bytes: 17, Code: CodeInvalidRange, Call: true},
		{Op: OpRefused, Via: "retval_resolve", Bytes: 90, Call: true, Code: CodeBudgetExhausted},
		{Op: OpCompose, Via: "expand", Value: "c1", Bytes: 1 << 40},
		{Op: OpStub, Via: "hook", Value: "c2", Size: 123456, Bytes: 800, Tool: "mcp\t__x\n\x1b[31m"},
		{Op: OpVerbatim, Via: "proxy", Value: "c3", Size: 10, Bytes: 10, Tool: long, Time: now.Add(-time.Hour)},
	}
	for _, r := range in {
		s.LogRead("r", r)
	}
	if len(*errs) > 0 {
		t.Fatal(*errs)
	}
	got, info := reads(t, s, "r")
	got = got[1:] // the stub of c1 that retain recorded
	if len(got) != len(in) || info.Malformed != 0 {
		t.Fatalf("got %d records (%d malformed), want %d", len(got), info.Malformed, len(in))
	}
	for i, r := range in {
		want := r
		if want.Time.IsZero() {
			want.Time = now
		}
		want.Time = time.UnixMilli(want.Time.UnixMilli())
		switch i {
		case 4:
			want.Tool = "mcp?__x??[31m"
		case 5:
			want.Tool = strings.Repeat("é", 64)
		}
		if fmt.Sprint(got[i]) != fmt.Sprint(want) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, got[i], want)
		}
	}
	b, err := os.ReadFile(filepath.Join(s.RunDir("r"), readsName))
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.SplitAfter(string(b), "\n") {
		if len(line) > MaxReadRecord {
			t.Errorf("line %d is %d bytes, over the %d-byte bound", i+1, len(line), MaxReadRecord)
		}
	}
}

// TestRetainRecords: retain records the stub shown for each value (with the
// value's size), a capacity preview, and every verbatim pass-through in a
// run that exists; a pass-through never makes a run.
func TestRetainRecords(t *testing.T) {
	s := Open(t.TempDir())
	L := DefaultLimits()
	L.Threshold = 10
	L.MaxRunValues = 1
	var out bytes.Buffer
	retain := func(call, data string) *Result {
		t.Helper()
		out.Reset()
		res, err := s.Retain(strings.NewReader(data), &out, RetainOptions{Run: "r", Call: call, Limits: L, Meta: Meta{Tool: "Bash"}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	retain("small0", "tiny")
	if _, err := os.Lstat(s.RunDir("r")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a verbatim result made the run: %v", err)
	}
	big := strings.Repeat("a line of output\n", 100)
	res := retain("big", big)
	retain("small", "tiny2")
	pre := retain("over", big+"x") // the run holds its one value: a preview
	if pre.Retained || pre.Stub == "" {
		t.Fatalf("want a capacity preview, got %+v", pre)
	}
	got, _ := reads(t, s, "r")
	want := []Read{
		{Op: OpStub, Via: "retain", Value: "big", Size: int64(len(big)), Bytes: int64(len(res.Stub)), Tool: "Bash"},
		{Op: OpVerbatim, Via: "retain", Value: "small", Size: 5, Bytes: 5, Tool: "Bash"},
		{Op: OpPreview, Via: "retain", Value: "over", Size: int64(len(big) + 1), Bytes: int64(len(pre.Stub)), Tool: "Bash"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d records %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		got[i].Time = time.Time{}
		if got[i] != want[i] {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

// TestReadLogUnknownRun: a read in a run that does not exist records
// nothing and creates nothing.
func TestReadLogUnknownRun(t *testing.T) {
	s := Open(t.TempDir())
	errs := logErrors(s)
	s.LogCall("nope", "c1", "peek", 0, ErrNotFound)
	if _, err := os.Lstat(s.RunDir("nope")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("logging made the run: %v", err)
	}
	if len(*errs) > 0 {
		t.Fatal(*errs)
	}
}

// TestReadLogHostile: a log that is a symlink, a FIFO or a directory is
// never written through or read, never blocks, and its failure is
// reported, not returned; a log at its bound takes no more records and a
// larger one is refused as corrupt.
func TestReadLogHostile(t *testing.T) {
	for _, kind := range []string{"symlink", "fifo", "dir", "full"} {
		t.Run(kind, func(t *testing.T) {
			s := Open(t.TempDir())
			retainAll(t, s, "r", "c1", []byte("v\n"))
			p := filepath.Join(s.RunDir("r"), readsName)
			os.Remove(p)
			target := filepath.Join(t.TempDir(), "target")
			os.WriteFile(target, nil, 0o600)
			switch kind {
			case "symlink":
				testenv.Symlink(t, target, p)
			case "fifo":
				testenv.Mkfifo(t, p)
			case "dir":
				os.Mkdir(p, 0o700)
			case "full":
				f, _ := os.Create(p)
				f.Truncate(MaxReadLog + MaxReadRecord + 1)
				f.Close()
			}
			errs := logErrors(s)
			done := make(chan struct{})
			go func() {
				defer close(done)
				s.LogCall("r", "c1", "peek", 10, nil)
				_, err := s.ScanReads("r", func(*Read) { t.Error("a record from a hostile log") })
				if !errors.Is(err, ErrCorrupt) {
					t.Errorf("ScanReads: %v, want corrupt", err)
				}
			}()
			select {
			case <-done:
			case <-time.After(time.Minute):
				t.Fatal("blocked on the log")
			}
			if len(*errs) != 1 {
				t.Errorf("OnLogError told %d times, want once: %v", len(*errs), *errs)
			}
			if b, _ := os.ReadFile(target); len(b) != 0 {
				t.Errorf("written through the symlink: %q", b)
			}
			rep, err := s.Verify(VerifyOptions{Run: "r"})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Corrupt != 1 || rep.Problems[0].File != readsName {
				t.Errorf("verify: %+v, want the log reported corrupt", rep.Problems)
			}
		})
	}
}

// TestReadLogMalformed: lines that are not records are skipped and
// counted, and verify reports them; the records around them count.
func TestReadLogMalformed(t *testing.T) {
	s := Open(t.TempDir())
	retainAll(t, s, "r", "c1", []byte("v\n"))
	p := filepath.Join(s.RunDir("r"), readsName)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("garbage\n")
	f.WriteString("1\tread\tpeek\t../x\t\t1\t0\t1\t\t\n") // not a clean id
	f.WriteString(strings.Repeat("x", 100<<10) + "\n")    // a very long line
	f.Close()
	s.LogCall("r", "c1", "peek", 7, nil)
	f, _ = os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("1\tread\tpeek\tc1\t\t3\t0\t1\t\t") // torn: no newline
	f.Close()
	got, info := reads(t, s, "r")
	if len(got) != 2 || got[1].Bytes != 7 {
		t.Errorf("records %+v, want the stub and the peek", got)
	}
	if info.Malformed != 4 || info.FirstMalformed != 2 {
		t.Errorf("malformed %d from line %d, want 4 from line 2", info.Malformed, info.FirstMalformed)
	}
	rep, err := s.Verify(VerifyOptions{Run: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Corrupt != 1 || !strings.Contains(rep.Problems[0].Message, "4 lines that are not records") {
		t.Errorf("verify: %+v", rep.Problems)
	}
}

// TestReadLogConcurrent: records appended at once by many writers are
// each whole: one write(2) each, with O_APPEND.
func TestReadLogConcurrent(t *testing.T) {
	testenv.SkipUnderWine(t, "atomic appends by concurrent writers (a handle with FILE_APPEND_DATA alone), which NTFS makes")
	s := Open(t.TempDir())
	retainAll(t, s, "r", "c1", []byte("v\n"))
	errs := logErrors(s)
	const writers, each = 8, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				s.LogRead("r", Read{Op: OpRead, Via: "peek", Value: "c1", Bytes: int64(w*each + i), Tool: strings.Repeat("t", 100)})
			}
		}()
	}
	wg.Wait()
	if len(*errs) > 0 {
		t.Fatal(*errs)
	}
	got, info := reads(t, s, "r")
	seen := map[int64]bool{}
	for _, r := range got[1:] {
		seen[r.Bytes] = true
	}
	if info.Malformed != 0 || len(seen) != writers*each {
		t.Errorf("%d distinct records, %d malformed; want %d, 0", len(seen), info.Malformed, writers*each)
	}
}

// TestReadLogReadOnly: a store on a read-only file system is read without
// logging, and without complaint.
func TestReadLogReadOnly(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir)
	retainAll(t, s, "r", "c1", []byte("v\n"))
	ro := Open(testenv.MountReadOnly(t, dir))
	errs := logErrors(ro)
	ro.LogCall("r", "c1", "peek", 3, nil)
	if len(*errs) > 0 {
		t.Fatalf("a read-only store complained: %v", *errs)
	}
	got, _ := reads(t, ro, "r")
	if len(got) != 1 {
		t.Errorf("records %+v, want retain's one", got)
	}
}

// TestReadLogNotDebris: the log is the run's own: neither gc's debris nor
// verify's, and it does not make a value.
func TestReadLogNotDebris(t *testing.T) {
	s := Open(t.TempDir())
	retainAll(t, s, "r", "c1", []byte("v\n"))
	s.LogCall("r", "c1", "peek", 3, nil)
	s.Now = func() time.Time { return time.Now().Add(48 * time.Hour) }
	rep, err := s.Verify(VerifyOptions{Run: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 0 || rep.Values != 1 {
		t.Errorf("verify: %d values, problems %+v", rep.Values, rep.Problems)
	}
	ri, err := s.ScanRun("r")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ri.Entries {
		if e.Name == readsName && e.Kind != KindOwn {
			t.Errorf(".reads is %v", e.Kind)
		}
	}
	if ri.Values != 1 {
		t.Errorf("Values = %d", ri.Values)
	}
}

// BenchmarkLogRead is the cost a read pays for its record: check the run
// directory, open the log O_APPEND, one write, close.
func BenchmarkLogRead(b *testing.B) {
	s := Open(b.TempDir())
	if err := os.MkdirAll(s.RunDir("r"), 0o700); err != nil {
		b.Fatal(err)
	}
	r := Read{Op: OpRead, Via: "peek", Value: "c1", Bytes: 1234, Call: true}
	for b.Loop() {
		s.LogRead("r", r)
	}
}

// FuzzReadRecord: any record round-trips through its line (fields cleaned
// as documented), every line is at most MaxReadRecord bytes, and no line
// makes the parser panic or accept a field a record cannot hold.
func FuzzReadRecord(f *testing.F) {
	f.Add(int64(1_800_000_000_000), "read", "peek", "c1", "s1", int64(42), int64(0), true, "invalid_range", "Bash")
	f.Add(int64(0), "stub", "hook\t\n", "x", "", int64(1<<40), int64(7), false, "", strings.Repeat("é", 100)+"\xff")
	f.Fuzz(func(t *testing.T, ms int64, op, via, value, step string, n, size int64, call bool, code, tool string) {
		if ms < 0 || ms > 1<<50 {
			ms = 0
		}
		r := Read{Time: time.UnixMilli(ms), Op: ReadOp(op), Via: via, Bytes: max(n, 0), Size: max(size, 0), Call: call, Code: Code(code), Tool: tool}
		if IsClean(value) {
			r.Value = ID(value)
		}
		if IsClean(step) {
			r.Step = ID(step)
		}
		line := appendRecord(nil, r)
		if len(line) > MaxReadRecord {
			t.Fatalf("%d-byte line", len(line))
		}
		var got Read
		ok := parseRecord(line[:len(line)-1], &got, interner{})
		switch r.Op {
		case OpStub, OpVerbatim, OpPreview, OpRead, OpRefused, OpCompose:
		default:
			if ok {
				t.Fatalf("op %q accepted", op)
			}
			return
		}
		if !ok {
			t.Fatalf("line %q of %+v does not parse", line, r)
		}
		want := r
		want.Via, want.Code, want.Tool = logField(via, 32), Code(logField(code, 32)), logField(tool, maxLogTool)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, want)
		}
		// Arbitrary bytes never panic, and what parses is a record.
		var any Read
		if parseRecord([]byte(tool), &any, interner{}) && (any.Value != "" && !IsClean(string(any.Value))) {
			t.Fatalf("accepted an unclean id from %q", tool)
		}
	})
}
