package retain

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A lookup's selection survives the read log: written as the eleventh
// field, read back as it was; one too long to keep is its flag and "…"
// (never a shorter range or pointer); a record without one (written
// before selections were kept) reads as no selection, and a field after
// the eleventh is ignored.
func TestReadLogSelection(t *testing.T) {
	s := Open(t.TempDir())
	retainAll(t, s, "r", "c1", []byte("a value\n"))
	errs := logErrors(s)
	long := "--pointer /" + strings.Repeat("a", MaxReadSel)
	s.LogSelection("r", "c1", "peek", "--lines 5-9", 42, nil)
	s.LogSelection("r", "c1", "resolve", long, 7, nil)
	s.LogSelection("r", "c1", "peek", "--query a\tb", 3, nil)
	s.LogSelection("r", "c1", "peek", "--lines 99-100", 0, errors.New("past the end"))
	if len(*errs) > 0 {
		t.Fatal(*errs)
	}
	log := filepath.Join(s.RunDir("r"), readsName)
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A record of an earlier version (ten fields), and one of a later
	// version (twelve).
	f.WriteString("1800000000000\tread\tpeek\tc1\t\t5\t0\t1\t\t\n")
	f.WriteString("1800000000000\tread\tpeek\tc1\t\t5\t0\t1\t\t\t--bytes 0-5\tfuture\n")
	f.Close()
	got, info := reads(t, s, "r")
	if info.Malformed != 0 {
		t.Fatalf("%d malformed records", info.Malformed)
	}
	got = got[1:] // retain's stub record
	want := []string{"--lines 5-9", "--pointer…", "--query a?b", "--lines 99-100", "", "--bytes 0-5"}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].Sel != w {
			t.Errorf("record %d: selection %q, want %q", i, got[i].Sel, w)
		}
	}
	if got[3].Code == "" || got[0].Bytes != 42 || !got[0].Call || got[0].Value != "c1" {
		t.Errorf("the records around the selection changed: %+v %+v", got[0], got[3])
	}
}
