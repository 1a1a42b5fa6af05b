package gc

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retval/retval/internal/fsx"
	"github.com/retval/retval/internal/testenv"
	"github.com/retval/retval/pkg/retain"
)

// TestZeroOptionsAreDefaults: Options{} is SPEC's policy (max-age 30d,
// grace 1h, no caps); Unlimited turns the age rule and the grace period
// off.
func TestZeroOptionsAreDefaults(t *testing.T) {
	now := time.Date(2030, 6, 1, 0, 0, 0, 0, time.UTC)
	mk := func(t *testing.T) *retain.Store {
		s := retain.Open(t.TempDir())
		for _, r := range []struct {
			name string
			idle time.Duration
		}{{"a", 40 * 24 * time.Hour}, {"b", 10 * 24 * time.Hour}, {"c", 10 * time.Minute}} {
			put(t, s, r.name, "v", []byte("hello\n"))
			os.WriteFile(filepath.Join(s.RunDir(retain.ID(r.name)), ".tmp-x-1"), []byte("junk"), 0o600)
			age(t, s.RunDir(retain.ID(r.name)), now, r.idle)
		}
		return s
	}
	clock := func() time.Time { return now }
	plan := func(t *testing.T, o Options) (removed, skipped, debris []string) {
		s := mk(t)
		s.Now = clock
		p, err := MakePlan(s, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range p.Debris {
			debris = append(debris, d.Path)
		}
		return names(p.Remove), skips(p.Skip), debris
	}
	r0, s0, d0 := plan(t, Options{})
	rd, sd, dd := plan(t, Defaults())
	if !slices.Equal(r0, rd) || !slices.Equal(s0, sd) || !slices.Equal(d0, dd) {
		t.Fatalf("Options{} plans %v %v %v; Defaults() %v %v %v", r0, s0, d0, rd, sd, dd)
	}
	if !slices.Equal(r0, []string{"a:max-age"}) || !slices.Equal(d0, []string{filepath.FromSlash("b.values/.tmp-x-1")}) {
		t.Fatalf("Options{} plans %v and debris %v; want a by max-age and b's debris (c's is within the hour)", r0, d0)
	}
	if r, _, _ := plan(t, Options{MaxAge: Unlimited}); len(r) != 0 {
		t.Fatalf("MaxAge Unlimited still removes %v", r)
	}
	if r, s, d := plan(t, Options{MaxAge: time.Minute, Grace: Unlimited}); len(r) != 3 || len(s) != 0 || len(d) != 0 {
		t.Fatalf("Grace Unlimited: removed %v, skipped %v, debris %v; want every run", r, s, d)
	}
	if _, _, d := plan(t, Options{MaxAge: Unlimited, Grace: Unlimited}); len(d) != 3 {
		t.Fatalf("Grace Unlimited: debris %v, want all three", d)
	}
	// Tombstones: 0 keeps them the default 30 days, Unlimited for ever.
	s := retain.Open(t.TempDir())
	s.Now = clock
	s.WriteTombstone(retain.Tombstone{Run: "x", Collected: now.Add(-31 * 24 * time.Hour)})
	for _, tc := range []struct {
		ttl  time.Duration
		want int
	}{{0, 1}, {Unlimited, 0}, {40 * 24 * time.Hour, 0}} {
		p, err := MakePlan(s, Options{TombstoneTTL: tc.ttl})
		if err != nil || len(p.Tombstones) != tc.want {
			t.Errorf("TombstoneTTL %v: %v expired, want %d (%v)", tc.ttl, p.Tombstones, tc.want, err)
		}
	}
}

// TestNoRunsDir: a runs-dir that does not exist yet is an empty store, for
// a real run and a dry run: no error, nothing created.
func TestNoRunsDir(t *testing.T) {
	s := retain.Open(filepath.Join(t.TempDir(), "runs"))
	for _, dry := range []bool{false, true} {
		rep, err := Collect(s, Options{DryRun: dry})
		if err != nil || rep == nil || !rep.NoRunsDir || rep.DryRun != dry || rep.Runs != 0 || len(rep.Removed) != 0 || rep.Failed == nil {
			t.Fatalf("dry %v: %+v %v", dry, rep, err)
		}
	}
	if p, err := MakePlan(s, Options{}); err != nil || p.Runs != 0 {
		t.Fatalf("plan: %+v %v", p, err)
	}
	if _, err := os.Lstat(s.Dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("gc created the runs-dir: %v", err)
	}
}

// TestCollectIsDurable: a collection syncs every directory whose entries
// it changed: the runs-dir after .retval is made and after the run is
// renamed out of it, .retval after trash and tombstones are made, the
// tombstone directory after the tombstone is renamed in (before the run
// moves), and the trash after the run is renamed into it. A power loss
// then leaves the run in place, or tombstoned in the trash.
func TestCollectIsDurable(t *testing.T) {
	now := time.Now()
	s := retain.Open(t.TempDir())
	put(t, s, "r", "v", []byte("hello\n"))
	age(t, s.RunDir("r"), now, 40*24*time.Hour)
	var synced []string
	fsx.TestHookSync = func(dir string) { synced = append(synced, strings.TrimPrefix(dir, s.Dir)) }
	defer func() { fsx.TestHookSync = nil }()
	rep, err := Collect(s, Options{})
	if err != nil || len(rep.Removed) != 1 {
		t.Fatalf("%+v %v", rep, err)
	}
	own := string(filepath.Separator) + ".retval"
	want := []string{
		"",                               // .retval made
		own,                              // trash made
		own,                              // tombstones made
		filepath.Join(own, "tombstones"), // tombstone written, before the run moves
		filepath.Join(own, "trash"),      // run renamed in…
		"",                               // …from the runs-dir
	}
	// Look for want as a subsequence.
	at := 0
	for _, d := range synced {
		if at < len(want) && d == want[at] {
			at++
		}
	}
	if at != len(want) {
		t.Fatalf("synced %q; want %q in that order", synced, want)
	}
}

// TestNothingOutsideIsTouched: with a symlink in place of .retval,
// .retval/trash, .retval/tombstones, a trash entry, or inside a stray
// directory of a run, gc touches nothing the links point at. A linked
// .retval stops gc with a corrupt error; a linked trash or tombstones
// directory is a failure while the rest is collected.
func TestNothingOutsideIsTouched(t *testing.T) {
	now := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		link     func(t *testing.T, s *retain.Store, out string)
		code     retain.Code // of Collect's error
		removed  int         // of the idle run
		failures int
	}{
		{"retval", func(t *testing.T, s *retain.Store, out string) {
			testenv.Symlink(t, out, filepath.Join(s.Dir, ".retval"))
		}, retain.CodeCorrupt, 0, 0},
		{"trash", func(t *testing.T, s *retain.Store, out string) {
			os.Mkdir(filepath.Join(s.Dir, ".retval"), 0o700)
			testenv.Symlink(t, filepath.Join(out, "trash"), filepath.Join(s.Dir, ".retval", "trash"))
		}, retain.CodeIO, 0, 1},
		{"tombstones", func(t *testing.T, s *retain.Store, out string) {
			os.Mkdir(filepath.Join(s.Dir, ".retval"), 0o700)
			testenv.Symlink(t, filepath.Join(out, "tombstones"), filepath.Join(s.Dir, ".retval", "tombstones"))
		}, retain.CodeIO, 0, 1},
		{"trash entry", func(t *testing.T, s *retain.Store, out string) {
			os.MkdirAll(filepath.Join(s.Dir, ".retval", "trash"), 0o700)
			testenv.Symlink(t, filepath.Join(out, "trash", "r.values.00"), filepath.Join(s.Dir, ".retval", "trash", "x.values.00"))
			testenv.Symlink(t, out, filepath.Join(s.Dir, ".retval", "trash", "y.values.00"))
		}, "", 1, 0},
		{"stray directory", func(t *testing.T, s *retain.Store, out string) {
			junk := filepath.Join(s.RunDir("live"), "junk")
			os.MkdirAll(filepath.Join(junk, "deeper"), 0o700)
			testenv.Symlink(t, out, filepath.Join(junk, "all"))
			testenv.Symlink(t, filepath.Join(out, "keep.txt"), filepath.Join(junk, "deeper", "file"))
			testenv.Symlink(t, out, filepath.Join(s.RunDir("live"), "link"))
			age(t, junk, now, 2*time.Hour)
		}, "", 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := retain.Open(t.TempDir())
			put(t, s, "old", "v", []byte("hello\n"))
			age(t, s.RunDir("old"), now, 40*24*time.Hour)
			put(t, s, "live", "v", []byte("hello\n"))
			age(t, s.RunDir("live"), now, 10*time.Minute)
			out := t.TempDir()
			files := map[string]string{
				"keep.txt":                       "keep\n",
				"gc.lock":                        "",
				"trash/r.values.00/v.txt":        "hello\n",
				"trash/r.values.00/v.meta.json":  "{}",
				"tombstones/ancient.json":        `{"run":"ancient","collected":"2000-01-01T00:00:00Z"}`,
				"tombstones/.tmp-ancient.json-1": "x",
			}
			for name, body := range files {
				os.MkdirAll(filepath.Dir(filepath.Join(out, name)), 0o700)
				os.WriteFile(filepath.Join(out, name), []byte(body), 0o600)
			}
			before := tree(t, out)
			tc.link(t, s, out)
			s.Now = func() time.Time { return now }
			o := Options{}
			rep, err := Collect(s, o)
			if retain.CodeOf(err) != tc.code {
				t.Fatalf("Collect: %v (code %q), want code %q", err, retain.CodeOf(err), tc.code)
			}
			if rep != nil && (len(rep.Removed) != tc.removed || len(rep.Failed) != tc.failures) {
				t.Fatalf("removed %v, failed %v", rep.Removed, rep.Failed)
			}
			// The dry run says the same.
			o.DryRun = true
			if _, derr := Collect(s, o); retain.CodeOf(derr) != tc.code {
				t.Fatalf("dry run: %v, want code %q", derr, tc.code)
			}
			if after := tree(t, out); !slices.Equal(before, after) {
				t.Fatalf("outside changed:\nbefore %q\nafter  %q", before, after)
			}
			if _, err := os.Stat(filepath.Join(s.RunDir("live"), "v.txt")); err != nil {
				t.Fatal("live run lost")
			}
			if tc.name == "stray directory" {
				if _, err := os.Lstat(filepath.Join(s.RunDir("live"), "junk")); !errors.Is(err, fs.ErrNotExist) {
					t.Fatal("stray directory not removed")
				}
			}
		})
	}
}

// tree lists every path under dir with its size and mode.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := d.Info()
		b, _ := os.ReadFile(p)
		out = append(out, strings.TrimPrefix(p, dir)+" "+fi.Mode().String()+" "+string(b))
		return nil
	})
	return out
}
