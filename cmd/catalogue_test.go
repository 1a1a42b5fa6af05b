package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retval/retval/pkg/retain"
)

func runMain(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(append([]string{"retval"}, args...), strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

func fixedStore(t *testing.T) *retain.Store {
	t.Helper()
	s := retain.Open(t.TempDir())
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	s.Now = func() time.Time { return at }
	L := retain.DefaultLimits()
	L.Threshold = retain.Unlimited
	for i, v := range []struct{ call, tool, body string }{
		{"first", "grep", strings.Repeat("a line of grep output\n", 1000)},
		{"second-call", "", "x"},
		{"third", "go-test", strings.Repeat("ok\n", 100000)},
	} {
		at = at.Add(time.Duration(i) * time.Minute)
		var out bytes.Buffer
		if _, err := s.Retain(strings.NewReader(v.body), &out, retain.RetainOptions{Run: "r", Call: v.call, Meta: retain.Meta{Tool: v.tool}, Limits: L, Policy: retain.PolicyLegacy}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestCatalogueJSONIsMarshalPage: --json prints MarshalPage's bytes, the
// ones {"$list_results": N} answers with, plus a newline.
func TestCatalogueJSONIsMarshalPage(t *testing.T) {
	s := fixedStore(t)
	for _, pg := range []struct{ page, size int }{{0, 20}, {0, 2}, {1, 2}, {7, 2}} {
		p, err := s.CataloguePage("r", pg.page, pg.size)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := retain.MarshalPage(p)
		out, errs, code := runMain(t, "catalogue", "--runs-dir", s.Dir, "--run", "r", "--json",
			"--page", strconv.Itoa(pg.page), "--page-size", strconv.Itoa(pg.size))
		if code != 0 || errs != "" || out != string(want)+"\n" {
			t.Errorf("page %d/%d: exit %d %q\ngot  %s\nwant %s", pg.page, pg.size, code, errs, out, want)
		}
	}
}

// TestCatalogueTable: the human table, exactly: aligned, humanised sizes.
func TestCatalogueTable(t *testing.T) {
	s := fixedStore(t)
	out, _, code := runMain(t, "catalogue", "--runs-dir", s.Dir, "--run", "r", "--page-size", "2")
	want := `ID           TOOL  SIZE    LINES  COMPLETE  CREATED               SHA256
first        grep  21 KiB  1000   yes       2030-01-02T03:04:05Z  ` + sha(t, s, "first") + `
second-call  -     1 B     1      yes       2030-01-02T03:05:05Z  ` + sha(t, s, "second-call") + `
[page 0: values 1-2 of 3; next: --page 1]
`
	if code != 0 || out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}

// TestRunsTable: catalogue --all, exactly, with the clock injected.
func TestRunsTable(t *testing.T) {
	s := fixedStore(t)
	old := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	filepath.Walk(s.Dir, func(p string, _ os.FileInfo, _ error) error { return os.Chtimes(p, old, old) })
	t.Setenv("RETVAL_NOW", "2030-01-04T00:00:00Z")
	ri, err := s.ScanRun("r")
	if err != nil {
		t.Fatal(err)
	}
	out, _, code := runMain(t, "catalogue", "--runs-dir", s.Dir, "--all")
	size := size(ri.Bytes)
	want := "RUN  VALUES  SIZE" + strings.Repeat(" ", len(size)-4+2) + "LAST ACTIVITY                      ACTIVE\n" +
		"r    3       " + size + "  2030-01-01T00:00:00Z (3 days ago)  no\n" +
		"[1 run, 3 values, " + size + "]\n"
	if code != 0 || out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}

func sha(t *testing.T, s *retain.Store, id string) string {
	d, err := s.Descriptor("r", id)
	if err != nil {
		t.Fatal(err)
	}
	return d.SHA256
}
