package gc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/retval/retval/internal/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retval/retval/internal/s3test"
	"github.com/retval/retval/pkg/retain"
)

func TestMain(m *testing.M) {
	testenv.BecomeLockHolder()
	code := m.Run()
	s3test.StopShared()
	os.Exit(code)
}

// holdLock has another process take the lock at path (shared, as a
// writer does, or exclusive) and returns the function that releases it.
func holdLock(t *testing.T, path string, exclusive bool) func() {
	t.Helper()
	spec := path
	if exclusive {
		spec = "ex:" + path
	}
	c := exec.Command(os.Args[0])
	c.Env = append(os.Environ(), testenv.HoldLockEnv+"="+spec)
	in, _ := c.StdinPipe()
	out, _ := c.StdoutPipe()
	c.Stderr = os.Stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "locked\n" {
		c.Process.Kill()
		t.Fatalf("holder: %q %v", line, err)
	}
	release := func() {
		in.Close()
		c.Wait()
	}
	t.Cleanup(func() {
		if c.ProcessState == nil {
			c.Process.Kill()
			c.Wait()
		}
	})
	return release
}

var lim = func() retain.Limits {
	L := retain.DefaultLimits()
	L.Threshold = retain.Unlimited
	L.MaxRunValues = retain.Unlimited
	L.MaxRunBytes = retain.Unlimited
	return L
}()

func put(t testing.TB, s *retain.Store, run, call string, body []byte) *retain.Descriptor {
	t.Helper()
	var out bytes.Buffer
	res, err := s.Retain(bytes.NewReader(body), &out, retain.RetainOptions{Run: run, Call: call, Limits: lim, Policy: retain.PolicyLegacy})
	if err != nil || !res.Retained {
		t.Fatalf("retain %s/%s: %v", run, call, err)
	}
	return res.Descriptor
}

// age sets the mtime of everything under path to now-d.
func age(t testing.TB, path string, now time.Time, d time.Duration) {
	t.Helper()
	tm := now.Add(-d)
	var paths []string
	filepath.Walk(path, func(p string, _ os.FileInfo, err error) error {
		paths = append(paths, p)
		return err
	})
	for _, p := range paths {
		if err := os.Chtimes(p, tm, tm); err != nil {
			t.Fatal(err)
		}
	}
}

func names(rs []Removal) []string {
	var out []string
	for _, r := range rs {
		out = append(out, string(r.Run)+":"+r.Rule)
	}
	return out
}

func skips(ss []Skip) []string {
	var out []string
	for _, s := range ss {
		out = append(out, string(s.Run)+":"+s.Rule+":"+s.Reason)
	}
	return out
}

// TestPlanRules: which runs each policy removes, in which order, and what
// it skips.
func TestPlanRules(t *testing.T) {
	now := time.Date(2030, 6, 1, 0, 0, 0, 0, time.UTC)
	body := bytes.Repeat([]byte("0123456789\n"), 1000) // 11000 bytes
	// Runs and their idle times.
	runs := []struct {
		name string
		idle time.Duration
	}{{"a", 50 * 24 * time.Hour}, {"b", 40 * 24 * time.Hour}, {"c", 10 * 24 * time.Hour}, {"d", 2 * time.Hour}, {"e", 10 * time.Minute}}
	for _, tc := range []struct {
		name        string
		o           Options
		remove      []string
		skip        []string
		keptAtLeast int
	}{
		{"defaults", Options{MaxAge: DefaultMaxAge, Grace: time.Hour}, []string{"a:max-age", "b:max-age"}, nil, 3},
		{"age off", Options{MaxAge: Unlimited, Grace: time.Hour}, nil, nil, 5},
		{"age 1d", Options{MaxAge: 24 * time.Hour, Grace: time.Hour}, []string{"a:max-age", "b:max-age", "c:max-age"}, nil, 2},
		{"age under grace", Options{MaxAge: time.Minute, Grace: time.Hour}, []string{"a:max-age", "b:max-age", "c:max-age", "d:max-age"}, []string{"e:max-age:active"}, 1},
		{"keep 2", Options{MaxAge: Unlimited, KeepRuns: 2, Grace: time.Hour}, []string{"a:keep-runs", "b:keep-runs", "c:keep-runs"}, nil, 2},
		{"keep 1 protects grace", Options{MaxAge: Unlimited, KeepRuns: 1, Grace: 3 * time.Hour}, []string{"a:keep-runs", "b:keep-runs", "c:keep-runs"}, []string{"d:keep-runs:active", "e:keep-runs:active"}, 2},
		{"bytes cap", Options{MaxAge: Unlimited, MaxBytes: 3 * 20000, Grace: time.Hour}, []string{"a:max-bytes", "b:max-bytes"}, nil, 3},
		{"age then bytes", Options{MaxAge: 45 * 24 * time.Hour, MaxBytes: 3 * 20000, Grace: time.Hour}, []string{"a:max-age", "b:max-bytes"}, nil, 3},
		{"bytes 1", Options{MaxAge: Unlimited, MaxBytes: 1, Grace: time.Hour}, []string{"a:max-bytes", "b:max-bytes", "c:max-bytes", "d:max-bytes"}, []string{"e:max-bytes:active"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := retain.Open(t.TempDir())
			for _, r := range runs {
				put(t, s, r.name, "v", body)
				age(t, s.RunDir(retain.ID(r.name)), now, r.idle)
			}
			s.Now = func() time.Time { return now }
			p, err := MakePlan(s, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(p.Remove); !slices.Equal(got, tc.remove) {
				t.Errorf("remove %v, want %v", got, tc.remove)
			}
			if got := skips(p.Skip); !slices.Equal(got, tc.skip) {
				t.Errorf("skip %v, want %v", got, tc.skip)
			}
			rep, err := Execute(s, p, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			ids, _ := s.RunIDs()
			if len(ids) != 5-len(tc.remove) || rep.RunsKept != len(ids) || len(ids) < tc.keptAtLeast {
				t.Errorf("after: %v runs, report says %d", ids, rep.RunsKept)
			}
			for _, r := range rep.Removed {
				if tb, ok := s.ReadTombstone(r.Run); !ok || !tb.Collected.Equal(now) || tb.Values != 1 || tb.Bytes != r.Bytes {
					t.Errorf("tombstone of %s: %+v %v", r.Run, tb, ok)
				}
			}
		})
	}
}

// TestBytesCapCountsDebris: debris that goes in the same gc counts as
// freed before any run is sacrificed to the size cap.
func TestBytesCapCountsDebris(t *testing.T) {
	now := time.Now()
	s := retain.Open(t.TempDir())
	put(t, s, "a", "v", []byte("small\n"))
	put(t, s, "b", "v", []byte("small\n"))
	junk := filepath.Join(s.RunDir("b"), ".tmp-v-1")
	os.WriteFile(junk, bytes.Repeat([]byte("x"), 1<<20), 0o600)
	age(t, s.RunDir("a"), now, 10*24*time.Hour)
	age(t, s.RunDir("b"), now, 5*24*time.Hour)
	rep, err := Collect(s, Options{MaxBytes: 100 << 10, Grace: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Removed) != 0 || len(rep.Debris) != 1 || rep.BytesKept > 100<<10 {
		t.Fatalf("report %+v", rep)
	}
}

func reportJSON(t *testing.T, r *Report) string {
	t.Helper()
	c := *r
	c.DryRun = false
	b, err := json.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDryRunIsThePlan: a dry run's report equals the report of the real run
// that follows, field for field.
func TestDryRunIsThePlan(t *testing.T) {
	now := time.Date(2030, 6, 1, 0, 0, 0, 0, time.UTC)
	s := retain.Open(t.TempDir())
	for i, idle := range []time.Duration{60, 45, 20, 5, 1} {
		run := fmt.Sprintf("r%d", i)
		put(t, s, run, "v", bytes.Repeat([]byte{'a' + byte(i), '\n'}, 5000*(i+1)))
		os.WriteFile(filepath.Join(s.RunDir(retain.ID(run)), ".tmp-x-1"), []byte("junk"), 0o600)
		age(t, s.RunDir(retain.ID(run)), now, idle*24*time.Hour)
	}
	os.MkdirAll(filepath.Join(s.Dir, ".retval", "trash", "z.values.00"), 0o700)
	s.WriteTombstone(retain.Tombstone{Run: "ancient", Collected: now.Add(-40 * 24 * time.Hour)})
	s.Now = func() time.Time { return now }
	o := Options{MaxAge: 30 * 24 * time.Hour, MaxBytes: 120000, Grace: time.Hour}
	o.DryRun = true
	dry, err := Collect(s, o)
	if err != nil {
		t.Fatal(err)
	}
	if !dry.DryRun || len(dry.Removed) == 0 || len(dry.Debris) == 0 || len(dry.Trash) != 1 || len(dry.Tombstones) != 1 {
		t.Fatalf("dry run did not plan everything: %+v", dry)
	}
	if ids, _ := s.RunIDs(); len(ids) != 5 {
		t.Fatalf("dry run removed runs: %v", ids)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, ".retval", "gc.lock")); err == nil {
		t.Fatal("dry run created the gc lock")
	}
	o.DryRun = false
	real, err := Collect(s, o)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := reportJSON(t, dry), reportJSON(t, real); a != b {
		t.Fatalf("dry run and real run differ:\ndry:  %s\nreal: %s", a, b)
	}
	if ids, _ := s.RunIDs(); len(ids) != 5-len(real.Removed) {
		t.Fatalf("runs left: %v", ids)
	}
}

// TestBusyOtherProcess: a run whose lock another process holds is skipped,
// with its debris; once released, the next gc takes it.
func TestBusyOtherProcess(t *testing.T) {
	now := time.Now()
	s := retain.Open(t.TempDir())
	put(t, s, "busy", "v", []byte("hello\n"))
	os.WriteFile(filepath.Join(s.RunDir("busy"), ".tmp-w-1"), []byte("in flight"), 0o600)
	age(t, s.RunDir("busy"), now, 40*24*time.Hour)
	release := holdLock(t, filepath.Join(s.RunDir("busy"), ".lock"), false)
	rep, err := Collect(s, Defaults())
	if err != nil {
		t.Fatal(err)
	}
	if got := skips(rep.Skipped); !slices.Equal(got, []string{"busy:max-age:busy", "busy:debris:busy"}) || len(rep.Removed) != 0 {
		t.Fatalf("skipped %v, removed %v", got, names(rep.Removed))
	}
	if _, err := os.Stat(filepath.Join(s.RunDir("busy"), ".tmp-w-1")); err != nil {
		t.Fatal("debris of a busy run removed")
	}
	release()
	rep, err = Collect(s, Defaults())
	if err != nil || len(rep.Removed) != 1 {
		t.Fatalf("after release: %v %+v", err, rep)
	}
}

// TestBusyAtExecution: a writer that takes the lock between plan and
// execution wins; the run is skipped, not removed.
func TestBusyAtExecution(t *testing.T) {
	now := time.Now()
	s := retain.Open(t.TempDir())
	put(t, s, "r", "v", []byte("hello\n"))
	age(t, s.RunDir("r"), now, 40*24*time.Hour)
	p, err := MakePlan(s, Defaults())
	if err != nil || len(p.Remove) != 1 {
		t.Fatalf("plan: %v %+v", err, p)
	}
	release := holdLock(t, filepath.Join(s.RunDir("r"), ".lock"), false)
	rep, err := Execute(s, p, Defaults())
	if err != nil || len(rep.Removed) != 0 || skips(rep.Skipped)[0] != "r:max-age:busy" {
		t.Fatalf("%v %+v", err, rep)
	}
	release()
	if _, err := s.Values("r"); err != nil {
		t.Fatal(err)
	}
}

// TestChangedSincePlan: a run read or written between plan and execution
// is skipped (its idle time no longer holds).
func TestChangedSincePlan(t *testing.T) {
	now := time.Now()
	for _, change := range []string{"read", "write"} {
		t.Run(change, func(t *testing.T) {
			s := retain.Open(t.TempDir())
			put(t, s, "r", "v", []byte("hello\n"))
			age(t, s.RunDir("r"), now, 40*24*time.Hour)
			p, err := MakePlan(s, Defaults())
			if err != nil || len(p.Remove) != 1 {
				t.Fatalf("plan: %v %+v", err, p)
			}
			if change == "read" {
				v, err := s.OpenValue("r", "v")
				if err != nil {
					t.Fatal(err)
				}
				v.Close()
			} else {
				put(t, s, "r", "w", []byte("new\n"))
			}
			rep, err := Execute(s, p, Defaults())
			if err != nil || len(rep.Removed) != 0 || len(rep.Skipped) != 1 || rep.Skipped[0].Reason != SkipChanged {
				t.Fatalf("%v %+v", err, rep)
			}
			if vals, err := s.Values("r"); err != nil || len(vals) == 0 {
				t.Fatalf("run lost: %v", err)
			}
		})
	}
}

// TestOrphanGetsDescriptor: content planned as debris whose descriptor
// arrives before execution is a value and stays.
func TestOrphanGetsDescriptor(t *testing.T) {
	now := time.Now()
	s := retain.Open(t.TempDir())
	put(t, s, "r", "v", []byte("hello\n"))
	dir := s.RunDir("r")
	os.Rename(filepath.Join(dir, "v.meta.json"), filepath.Join(s.Dir, "saved.json"))
	age(t, dir, now, 2*time.Hour)
	p, err := MakePlan(s, Defaults())
	if err != nil || len(p.Debris) != 1 || p.Debris[0].Path != "r.values/v.txt" {
		t.Fatalf("plan: %v %+v", err, p)
	}
	os.Rename(filepath.Join(s.Dir, "saved.json"), filepath.Join(dir, "v.meta.json"))
	rep, err := Execute(s, p, Defaults())
	if err != nil || len(rep.Debris) != 0 {
		t.Fatalf("%v %+v", err, rep)
	}
	if vals, _ := s.Values("r"); len(vals) != 1 {
		t.Fatal("value lost")
	}
}

// TestOneGCAtATime: a second gc fails at once with CodeBusy.
func TestOneGCAtATime(t *testing.T) {
	s := retain.Open(t.TempDir())
	put(t, s, "r", "v", []byte("hello\n"))
	l, err := s.LockCollector(true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Collect(s, Defaults()); retain.CodeOf(err) != retain.CodeBusy {
		t.Fatalf("second gc in-process: %v", err)
	}
	l.Unlock()
	release := holdLock(t, filepath.Join(s.Dir, ".retval", "gc.lock"), true)
	for _, dry := range []bool{false, true} {
		o := Defaults()
		o.DryRun = dry
		if _, err := Collect(s, o); retain.CodeOf(err) != retain.CodeBusy || !strings.Contains(err.Error(), "another gc is running") {
			t.Fatalf("second gc (dry %v): %v", dry, err)
		}
	}
	release()
	if _, err := Collect(s, Defaults()); err != nil {
		t.Fatal(err)
	}
}

// TestInterruptedGC: a gc that died after renaming a run into the trash
// (tombstone written) leaves work the next gc finishes.
func TestInterruptedGC(t *testing.T) {
	now := time.Now()
	s := retain.Open(t.TempDir())
	put(t, s, "r", "v", bytes.Repeat([]byte("x\n"), 1000))
	trash := filepath.Join(s.Dir, ".retval", "trash")
	os.MkdirAll(trash, 0o700)
	s.WriteTombstone(retain.Tombstone{Run: "r", Collected: now})
	if err := os.Rename(s.RunDir("r"), filepath.Join(trash, "r.values.0011")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Values("r"); !errors.Is(err, retain.ErrCollected) {
		t.Fatalf("lookup after the rename: %v", err)
	}
	rep, err := Collect(s, Defaults())
	if err != nil || len(rep.Trash) != 1 || rep.Trash[0].Bytes < 2000 {
		t.Fatalf("%v %+v", err, rep)
	}
	if ents, _ := os.ReadDir(trash); len(ents) != 0 {
		t.Fatalf("trash not emptied: %v", ents)
	}
}

// TestAge formats durations as the reports do.
func TestAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		40 * time.Second: "40s", 5 * time.Minute: "5m", 3 * time.Hour: "3h",
		26 * time.Hour: "1d 2h", 48 * time.Hour: "2d", 40 * 24 * time.Hour: "40d",
	} {
		if got := Age(d); got != want {
			t.Errorf("Age(%v) = %q, want %q", d, got, want)
		}
	}
}
