package ui

import (
	"reflect"
	"testing"
	"time"

	"github.com/retval/retval/internal/s3test"
	"github.com/retval/retval/pkg/retain"
)

// The page works on object storage through the store's own methods: the
// runs, a timeline, a value's lines read back, its lines and outline,
// all as on a runs-dir, and nothing is written to the bucket.
func TestObjectStore(t *testing.T) { s3test.Each(t, testObjectStore) }

func testObjectStore(t *testing.T, srv *s3test.Server) {
	srv.SetEnv(t)
	bucket := srv.NewBucket(t)
	s := &retain.Store{Dir: "s3://" + bucket + "/runs", Now: func() time.Time { return testNow }}
	put(t, s, "r", "log", "Bash", numbered(5000))
	put(t, s, "r", "doc", "mcp", []byte(`{"a": {"b": [1, 2]}, "name": "x"}`))
	s.LogSelection("r", "log", "peek", "--lines 4998-5000", 100, nil)
	s.LogSelection("r", "doc", "resolve", "--pointer /a/b", 6, nil)
	keys := func() []string {
		var out []string
		_, err := s.ScanReads("r", func(*retain.Read) {})
		if err != nil {
			t.Fatal(err)
		}
		ri, err := s.ScanRun("r")
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ri.Entries {
			out = append(out, e.Name)
		}
		return out
	}
	before := keys()
	ui := newServer(t, s)
	var page runsPage
	getJSON(t, ui, "/api/runs?wait=1", &page)
	if page.Total != 1 || page.Rows[0].Values != 2 || page.Rows[0].Status == "" {
		t.Fatalf("runs: %+v", page)
	}
	// Every record has the same time: the bucket lists them in any order,
	// and a read listed before its value's stub still falls under it.
	var tl timeline
	getJSON(t, ui, "/api/runs/r/timeline", &tl)
	if tl.Total != 2 {
		t.Fatalf("timeline: %+v", tl)
	}
	for _, c := range tl.Calls {
		want := map[retain.ID]string{"log": "--lines 4998-5000", "doc": "--pointer /a/b"}[c.Value]
		if c.Op != "stub" || len(c.Reads) != 1 || c.Reads[0].Sel != want {
			t.Errorf("call %+v, want a stub and one read %q", c, want)
		}
	}
	var vi valueInfo
	getJSON(t, ui, "/api/runs/r/values/log", &vi)
	if !reflect.DeepEqual(vi.Ranges, [][2]int64{{4998, 5000}}) {
		t.Errorf("lines read: %v", vi.Ranges)
	}
	var lp linesPage
	getJSON(t, ui, "/api/runs/r/values/log/lines?first=4999&count=5", &lp)
	if len(lp.Lines) != 2 || lp.Lines[1].Text != "line 5000 of the value" {
		t.Errorf("lines: %+v", lp)
	}
	var ol outlinePage
	getJSON(t, ui, "/api/runs/r/values/doc/outline?pointer=%2Fa", &ol)
	if len(ol.Head) != 1 || ol.Head[0].Pointer != "/a/b" {
		t.Errorf("outline: %+v", ol.Head)
	}
	ui.Close()
	if after := keys(); !reflect.DeepEqual(before, after) {
		t.Errorf("the bucket changed:\nbefore %v\nafter  %v", before, after)
	}
}
