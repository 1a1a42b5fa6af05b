package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retval/retval/pkg/retain"
	"github.com/retval/retval/pkg/stats"
)

// The first page of runs does not wait for the store's scan: it comes in
// run-id order, says a scan is under way, and holds only its rows; once
// the scan ends, pages come in the order asked for, with gc's status.
func TestRunsPageBeforeAndAfterTheScan(t *testing.T) {
	s := newStore(t)
	for i := range 7 {
		run := fmt.Sprintf("run-%d", i)
		put(t, s, run, "v", "Bash", numbered(10*(i+1)))
		// Older runs have bigger numbers: run-6 was last active 60 days ago.
		old := testNow.Add(-time.Duration(i) * 10 * 24 * time.Hour)
		touchRun(t, s, run, old)
	}
	srv := newServer(t, s)
	release := make(chan struct{})
	srv.beforeScan = func() { <-release }
	var first runsPage
	getJSON(t, srv, "/api/runs?limit=3&sort=bytes&desc=1", &first)
	if !first.Scanning || first.Sort != "run" || first.Total != 7 || len(first.Rows) != 3 {
		t.Fatalf("page before the scan: %+v", first)
	}
	for i, r := range first.Rows {
		if want := retain.ID(fmt.Sprintf("run-%d", i)); r.Run != want || r.Status != "" || r.Values != 1 {
			t.Errorf("row %d: %+v, want run %s without a status", i, r, want)
		}
	}
	close(release)
	var sorted runsPage
	getJSON(t, srv, "/api/runs?limit=3&sort=bytes&desc=1&wait=1", &sorted)
	if sorted.Scanning || sorted.Sort != "bytes" || !sorted.Desc || sorted.Total != 7 {
		t.Fatalf("page after the scan: %+v", sorted)
	}
	if got := []retain.ID{sorted.Rows[0].Run, sorted.Rows[1].Run, sorted.Rows[2].Run}; !reflect.DeepEqual(got, []retain.ID{"run-6", "run-5", "run-4"}) {
		t.Errorf("by bytes, descending: %v", got)
	}
	var page runsPage
	getJSON(t, srv, "/api/runs?sort=activity&desc=1&q=RUN-", &page)
	if page.Total != 7 || page.Rows[0].Run != "run-0" || page.Rows[6].Run != "run-6" {
		t.Fatalf("by activity: %+v", page.Rows)
	}
	// gc's default policy: max-age 30d. run-4 (40 days idle) and older go.
	for _, r := range page.Rows {
		n, _ := strconv.Atoi(strings.TrimPrefix(string(r.Run), "run-"))
		want := "idle"
		if n >= 4 {
			want = "collect"
		}
		if n == 0 {
			want = "live"
		}
		if r.Status != want || r.Why == "" {
			t.Errorf("%s: %s (%s), want %s", r.Run, r.Status, r.Why, want)
		}
	}
	getJSON(t, srv, "/api/runs?q=collect", &page)
	if page.Total != 3 {
		t.Errorf("filtered by status: %d runs", page.Total)
	}
	getJSON(t, srv, "/api/runs?offset=6&limit=5&sort=run", &page)
	if page.Total != 7 || len(page.Rows) != 1 || page.Rows[0].Run != "run-6" {
		t.Errorf("the last page: %+v", page)
	}
}

// touchRun sets the modification time of every file of run to t.
func touchRun(t *testing.T, s *retain.Store, run string, at time.Time) {
	t.Helper()
	ri, err := s.ScanRun(retain.ID(run))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ri.Entries {
		if err := chtimes(s.Dir+"/"+e.Path, at); err != nil {
			t.Fatal(err)
		}
	}
}

// A run's timeline lists its calls in the order the read log has them,
// each with the reads of its value that followed, with what each read
// selected; a value's page turns those selections into the lines read.
func TestTimelineAndReadLines(t *testing.T) {
	s := newStore(t)
	put(t, s, "r", "log", "Bash", numbered(5000))
	put(t, s, "r", "doc", "mcp__api__get", []byte("{\"a\": {\"b\": [1, 2]},\n \"name\": \"x\"}\n"))
	s.LogSelection("r", "log", "peek", "--lines 10-12", 100, nil)
	s.LogSelection("r", "log", "peek", "--lines 4998-5000", 100, nil)
	s.LogSelection("r", "log", "peek", "--query line 7", 100, nil)
	s.LogSelection("r", "log", "peek", "--lines 9000-9001", 50, retain.Errorf(retain.CodeInvalidRange, "past the end"))
	s.LogSelection("r", "log", "resolve", "--bytes "+strconv.Itoa(len(numbered(99)))+"-"+strconv.Itoa(len(numbered(101))), 40, nil)
	s.LogSelection("r", "doc", "resolve", "--pointer /name", 3, nil)
	s.LogSelection("r", "doc", "resolve", "--pointer /a/b", 6, nil)
	s.LogSelection("r", "", "catalogue", "", 500, nil)
	srv := newServer(t, s)

	var tl timeline
	getJSON(t, srv, "/api/runs/r/timeline", &tl)
	if tl.Total != 3 || len(tl.Calls) != 3 {
		t.Fatalf("calls: %+v", tl)
	}
	log, doc, list := tl.Calls[0], tl.Calls[1], tl.Calls[2]
	if log.Value != "log" || log.Op != "stub" || log.Tool != "Bash" || log.Lines != 5000 || !log.Exists || len(log.Reads) != 5 {
		t.Errorf("the log's call: %+v", log)
	}
	if log.Reads[0].Sel != "--lines 10-12" || log.Reads[0].Via != "peek" || log.Reads[3].Code != "invalid_range" {
		t.Errorf("the log's reads: %+v", log.Reads)
	}
	if doc.Value != "doc" || len(doc.Reads) != 2 || doc.Reads[0].Sel != "--pointer /name" {
		t.Errorf("the document's call: %+v", doc)
	}
	if list.Value != "" || len(list.Reads) != 1 || list.Reads[0].Via != "catalogue" {
		t.Errorf("the listing: %+v", list)
	}
	getJSON(t, srv, "/api/runs/r/timeline?offset=1&limit=1", &tl)
	if tl.Total != 3 || len(tl.Calls) != 1 || tl.Calls[0].Value != "doc" || len(tl.Calls[0].Reads) != 2 {
		t.Errorf("page 2 of 1 call: %+v", tl)
	}

	var vi valueInfo
	getJSON(t, srv, "/api/runs/r/values/log", &vi)
	want := [][2]int64{{10, 12}, {100, 101}, {4998, 5000}}
	if !reflect.DeepEqual(vi.Ranges, want) {
		t.Errorf("lines read: %v, want %v", vi.Ranges, want)
	}
	if vi.Reads[2].First != 0 || vi.Reads[3].First != 0 {
		t.Errorf("a search and a failed read cover no lines: %+v", vi.Reads)
	}
	if !strings.HasPrefix(vi.Stub, "[retained #log] ") || vi.StubShown != int64(len(vi.Stub)) {
		t.Errorf("stub %q, the log says %d bytes", vi.Stub, vi.StubShown)
	}
	getJSON(t, srv, "/api/runs/r/values/doc", &vi)
	if !reflect.DeepEqual(vi.Ranges, [][2]int64{{1, 2}}) || vi.Reads[0].First != 2 || vi.Reads[1].First != 1 || vi.Reads[1].Last != 1 {
		t.Errorf("pointer reads: %v %+v", vi.Ranges, vi.Reads)
	}
}

// The viewer's lines: any window, found through the line index, a long
// line cut on a UTF-8 boundary with the bytes left counted, control
// bytes and invalid UTF-8 escaped as in a stub (a line ending, \n or
// \r\n, left out), and a value holding markup delivered as a JSON
// string, never as markup.
func TestLines(t *testing.T) {
	s := newStore(t)
	body := numbered(100_000) // indexed
	long := strings.Repeat("é", 3000)
	body = append(body, []byte("<script>alert(1)</script>\n\x1b[31mred\r\n"+long+"\nlast, no newline\xff")...)
	put(t, s, "r", "v", "Bash", body)
	srv := newServer(t, s)
	var p linesPage
	getJSON(t, srv, "/api/runs/r/values/v/lines?first=99999&count=50", &p)
	if p.Total != 100_004 || len(p.Lines) != 6 {
		t.Fatalf("%d lines of %d", len(p.Lines), p.Total)
	}
	want := []string{"line 99999 of the value", "line 100000 of the value", "<script>alert(1)</script>", `\x1b[31mred`}
	for i, w := range want {
		if p.Lines[i].Text != w || p.Lines[i].N != int64(99999+i) || p.Lines[i].Cut != 0 {
			t.Errorf("line %d: %+v, want %q", 99999+i, p.Lines[i], w)
		}
	}
	cut := p.Lines[4]
	if !strings.HasPrefix(long, cut.Text) || len(cut.Text)+int(cut.Cut) != len(long)+1 || len(cut.Text) > maxLineShown || len(cut.Text)%2 != 0 {
		t.Errorf("the long line: %d bytes shown, %d cut (of %d)", len(cut.Text), cut.Cut, len(long)+1)
	}
	if p.Lines[5].Text != `last, no newline\xff` {
		t.Errorf("the last line: %q", p.Lines[5].Text)
	}
	code, raw := get(t, srv, "/api/runs/r/values/v/lines?first=100001&count=1")
	if code != 200 || bytes.Contains(raw, []byte("<script>")) || !bytes.Contains(raw, []byte(`\u003cscript\u003e`)) {
		t.Errorf("markup in a value must travel escaped in the JSON: %s", raw)
	}
	getJSON(t, srv, "/api/runs/r/values/v/lines?first=1&count=2", &p)
	if len(p.Lines) != 2 || p.Lines[0].Text != "line 1 of the value" {
		t.Errorf("the first lines: %+v", p.Lines)
	}
	getJSON(t, srv, "/api/runs/r/values/v/lines?first=200000&count=2", &p)
	if len(p.Lines) != 0 {
		t.Errorf("past the end: %+v", p.Lines)
	}
}

// Search pages through the same engine as peek --query; the outline lists
// a JSON value's children with the resolve command of each; the raw
// value downloads whole.
func TestQueryOutlineRaw(t *testing.T) {
	s := newStore(t)
	put(t, s, "r", "v", "Bash", numbered(1000))
	doc := `{"a": {"b": {"c": "deep"}}, "it's": [1, 2, 3, 4, 5]}`
	put(t, s, "r", "-doc", "mcp", []byte(doc))
	srv := newServer(t, s)
	var q queryPage
	getJSON(t, srv, "/api/runs/r/values/v/query?q=line+99+", &q)
	if q.Total != 1 || len(q.Matches) != 1 || q.Matches[0].N != 99 {
		t.Errorf("search: %+v", q)
	}
	getJSON(t, srv, "/api/runs/r/values/v/query?q=%5Eline+9%5Cd+&regex=1", &q)
	if q.Total != 10 || q.Matches[0].N != 90 || q.Matches[0].Text != "line 90 of the value" {
		t.Errorf("regex search: %+v", q)
	}
	var ol struct {
		Kind    string        `json:"kind"`
		Count   int64         `json:"count"`
		Head    []outlineNode `json:"head"`
		Command string        `json:"command"`
	}
	getJSON(t, srv, "/api/runs/r/values/-doc/outline?pointer=%2Fa%2Fb", &ol)
	if ol.Kind != "object" || len(ol.Head) != 1 || ol.Head[0].Pointer != "/a/b/c" || ol.Head[0].Preview != `"deep"` {
		t.Fatalf("outline: %+v", ol)
	}
	wantCmd := "retval resolve --runs-dir " + retain.ShellQuote(s.Dir) + " --run r --pointer /a/b/c -- -doc"
	if ol.Head[0].Command != wantCmd {
		t.Errorf("command %q\nwant    %q", ol.Head[0].Command, wantCmd)
	}
	getJSON(t, srv, "/api/runs/r/values/-doc/outline?pointer=", &ol)
	if len(ol.Head) != 2 || ol.Head[1].Command != "retval resolve --runs-dir "+retain.ShellQuote(s.Dir)+` --run r --pointer '/it'\''s' -- -doc` {
		t.Errorf("root: %+v", ol.Head)
	}
	code, body := get(t, srv, "/api/runs/r/values/-doc/outline?pointer=%2Fnope")
	if code != 400 || !strings.Contains(string(body), "bad_pointer") {
		t.Errorf("a pointer to nothing: %d %s", code, body)
	}
	code, body = get(t, srv, "/api/runs/r/values/v/raw")
	if code != 200 || !bytes.Equal(body, numbered(1000)) {
		t.Errorf("raw: %d, %d bytes", code, len(body))
	}
}

// The savings API answers what stats answers: the same report as
// `retval stats --all --json`, grouped, and its course over time.
func TestSavingsAreStats(t *testing.T) {
	s := newStore(t)
	put(t, s, "a", "v", "Bash", numbered(3000))
	put(t, s, "b", "w", "Read", numbered(5000))
	s.LogSelection("a", "v", "peek", "--lines 1-10", 200, nil)
	srv := newServer(t, s)
	var got savings
	getJSON(t, srv, "/api/stats", &got)
	want, err := stats.Compute(stats.Options{Store: s, All: true})
	if err != nil {
		t.Fatal(err)
	}
	wj, _ := json.Marshal(want)
	gj, _ := json.Marshal(got.Total)
	if !bytes.Equal(wj, gj) {
		t.Errorf("total\n got %s\nwant %s", gj, wj)
	}
	if len(got.ByTool.Rows) != 2 || len(got.ByRun.Rows) != 2 || got.RunRows != 2 || len(got.Series) == 0 {
		t.Errorf("groups: %+v %+v, %d points", got.ByTool.Rows, got.ByRun.Rows, len(got.Series))
	}
	if last := got.Series[len(got.Series)-1].UpTo; last.KeptOut != want.Total.KeptOut {
		t.Errorf("over time, kept out %d, want %d", last.KeptOut, want.Total.KeptOut)
	}
	var sum runSummary
	getJSON(t, srv, "/api/runs/a", &sum)
	if sum.Stats.Total.Lookups != 1 || sum.Values != 1 {
		t.Errorf("run a: %+v", sum)
	}
}

// The server writes nothing to the store it shows: browsing every page
// leaves each file as it was (no activity stamp, no read-log record).
func TestReadOnly(t *testing.T) {
	s := newStore(t)
	put(t, s, "r", "v", "Bash", numbered(3000))
	put(t, s, "r", "j", "mcp", []byte(`{"a": [1, 2]}`))
	before := snapshot(t, s.Dir)
	srv := newServer(t, s)
	for _, p := range []string{"/api/runs?wait=1", "/api/runs/r", "/api/runs/r/timeline", "/api/runs/r/values/v",
		"/api/runs/r/values/v/lines?first=2900&count=100", "/api/runs/r/values/v/query?q=line", "/api/runs/r/values/j/outline?pointer=",
		"/api/runs/r/values/v/raw", "/api/stats"} {
		if code, body := get(t, srv, p); code != 200 {
			t.Fatalf("%s: %d %s", p, code, body)
		}
	}
	srv.Close()
	if after := snapshot(t, s.Dir); !reflect.DeepEqual(before, after) {
		t.Errorf("the store changed:\nbefore %v\nafter  %v", before, after)
	}
}

// A read recorded before its value's stub (records of one instant, which
// object storage lists in any order) falls under that value's call, not
// a call of its own.
func TestTimelineReadBeforeItsStub(t *testing.T) {
	s := newStore(t)
	put(t, s, "r", "v", "Bash", numbered(100))
	s.LogSelection("r", "v", "peek", "--lines 1-5", 50, nil)
	log := s.RunDir("r") + "/.reads"
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	recs := strings.SplitAfter(string(b), "\n")
	if len(recs) != 3 || recs[2] != "" { // the stub, the read
		t.Fatalf("log %q", b)
	}
	if err := os.WriteFile(log, []byte(recs[1]+recs[0]), 0o600); err != nil {
		t.Fatal(err)
	}
	var tl timeline
	getJSON(t, newServer(t, s), "/api/runs/r/timeline", &tl)
	if tl.Total != 1 || tl.Calls[0].Op != "stub" || tl.Calls[0].Tool != "Bash" || len(tl.Calls[0].Reads) != 1 {
		t.Errorf("timeline: %+v", tl)
	}
}
