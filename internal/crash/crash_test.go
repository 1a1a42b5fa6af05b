package crash

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var (
	long   = flag.Bool("crash.long", false, "explore many more crash states per workload and model")
	states = flag.Int("crash.states", 0, "states to check per workload and model (0: 40, or 2000 with -crash.long)")
	seed   = flag.Uint64("crash.seed", 1, "seed of the sampled states")
	// -crash.ops prints each recorded trace's operations.
	showOps = flag.Bool("crash.ops", false, "print the operations each workload's trace recorded")
)

// retval is the binary under test, built once by TestMain.
var retval string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "retval-crash-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	retval = filepath.Join(dir, "retval")
	build := exec.Command("go", "build", "-o", retval, "github.com/retval/retval")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building retval:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func needStrace(t *testing.T) string {
	t.Helper()
	s, err := exec.LookPath("strace")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("strace is not installed (.ci/run installs it)")
		}
		t.Skip("needs strace")
	}
	return s
}

func budget() int {
	switch {
	case *states > 0:
		return *states
	case *long:
		return 2000
	}
	return 40
}

// report is what a workload's exploration under one model found.
type report struct {
	ops, fsyncs       int
	total             int
	exhaustive        bool
	generated, unique int
	checked           int
	losses            []string
	damage            []string // verify found a value that is corrupt or missing
	debris            map[string]int
}

// explore records w and checks its crash states under model ("ordered"
// or "weak"), sampling with rng.
func explore(t *testing.T, strace string, w workload, model string, env []string, limit int, rng *rand.Rand) report {
	t.Helper()
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	before := w.setup(t, root)
	argv := w.args(root)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = root
	rec, err := Record(strace, root, cmd)
	if err != nil {
		t.Fatal(err)
	}
	if *showOps {
		for i, op := range rec.Ops {
			fmt.Printf("%s #%d %s\n", w.name, i, op.String())
		}
	}
	values := append(before, w.promised()...)
	for i, v := range values {
		if values[i].after = shownAt(rec.Ops, v.marker); values[i].after < 0 {
			t.Fatalf("%s never printed %q: %.300q", w.name, v.marker, rec.Stdout)
		}
	}
	rep := report{ops: len(rec.Ops), debris: map[string]int{}}
	for _, op := range rec.Ops {
		switch {
		case op.Kind == OpFsync:
			rep.fsyncs++
		case op.Kind != OpPromise && w.noWrites:
			t.Errorf("%s wrote under the root: %s", w.name, op.String())
		}
	}
	var stub []byte
	if len(w.promised()) > 0 {
		if stub, err = w.stubOf(rec.Stdout); err != nil || !bytes.HasPrefix(stub, []byte("[retained #")) {
			t.Fatalf("%s printed no stub (%v): %.300q", w.name, err, rec.Stdout)
		}
	}
	if w.wantStdout != nil && !bytes.Equal(rec.Stdout, w.wantStdout()) {
		t.Errorf("%s printed %.300q, want %.300q", w.name, rec.Stdout, w.wantStdout())
	}
	var sts []State
	switch model {
	case "ordered":
		sts = Ordered(rec.Ops, 8)
		rep.total, rep.exhaustive = len(sts), true
	case "weak":
		sts, rep.total, rep.exhaustive = Weak(rec.Ops, limit*4, rng)
	}
	rep.generated = len(sts)
	// Distinct states, the ones after a promise first: they are where a
	// loss shows. Two states are the same check when they hold the same
	// files and follow the same promises: the files alone are not, since
	// what the checks demand grows with each promise (the files a crash
	// before the stub leaves may be a loss after it).
	type key struct {
		sum      [32]byte
		promised int
	}
	seen := map[key]bool{}
	type built struct {
		st State
		fs *FS
	}
	var todo []built
	for _, st := range sts {
		fs := st.Build(rec.Before, rec.Ops)
		k := key{fs.Sum(), st.Promised}
		if seen[k] {
			continue
		}
		seen[k] = true
		todo = append(todo, built{st, fs})
	}
	rep.unique = len(todo)
	sort.SliceStable(todo, func(i, j int) bool { return todo[i].st.Promised > todo[j].st.Promised })
	if len(todo) > limit {
		// Keep every state after the last promise up to half the budget,
		// the rest sampled evenly.
		rng.Shuffle(len(todo), func(i, j int) { todo[i], todo[j] = todo[j], todo[i] })
		sort.SliceStable(todo, func(i, j int) bool { return todo[i].st.Promised > todo[j].st.Promised })
		todo = append(todo[:limit/2], sample(todo[limit/2:], limit-limit/2, rng)...)
	}
	for _, b := range todo {
		dir := t.TempDir()
		if err := b.fs.Materialise(dir); err != nil {
			t.Fatal(err)
		}
		rep.checked++
		check(t, &rep, w, dir, filepath.Join(root, w.runs), b.st, rec, values, stub)
		os.RemoveAll(dir)
	}
	return rep
}

func sample[T any](s []T, n int, rng *rand.Rand) []T {
	if len(s) <= n {
		return s
	}
	rng.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	return s[:n]
}

type verifyReport struct {
	Corrupt, Missing, Debris int
	Problems                 []struct{ Run, File, Kind, Message string }
}

var noisy = regexp.MustCompile(`[0-9a-f]{6,}|[0-9]{4,}`)

func verify(dir, runs string) (verifyReport, []byte, error) {
	out, err := exec.Command(retval, "verify", "--runs-dir", filepath.Join(dir, runs), "--grace", "0s", "--json").Output()
	var vr verifyReport
	line, _, _ := bytes.Cut(out, []byte("\n"))
	if jerr := json.Unmarshal(line, &vr); jerr != nil {
		return vr, out, fmt.Errorf("verify printed no report (%v): %s", err, out)
	}
	return vr, out, nil
}

// check runs the checks of the issue on one materialised crash state.
func check(t *testing.T, rep *report, w workload, dir, origRuns string, st State, rec *Run, values []value, stub []byte) {
	t.Helper()
	runs := filepath.Join(dir, w.runs)
	where := func() string { return st.Describe(rec.Ops) }
	damage := func(s string) {
		if !w.damaged || st.Promised > 0 {
			rep.damage = append(rep.damage, s)
		}
	}
	vr, out, err := verify(dir, w.runs)
	if err != nil {
		damage(fmt.Sprintf("%v; %s", err, where()))
	} else {
		if vr.Corrupt+vr.Missing > 0 {
			damage(fmt.Sprintf("verify: %s; %s", out, where()))
		}
		for _, p := range vr.Problems {
			if p.Kind == "debris" {
				rep.debris[noisy.ReplaceAllString(p.File, "*")]++
			}
		}
	}
	resolve := func(v value) ([]byte, int) {
		c := exec.Command(retval, "resolve", "--runs-dir", runs, "--run", v.run, v.id, "--max-lookup-bytes", "0", "--max-step-bytes", "0")
		b, err := c.Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return b, ee.ExitCode()
		}
		return b, 0
	}
	for _, v := range values {
		shown := st.Promised >= v.after
		if v.replay {
			// Before the stub was printed, replay shows the stub or the
			// input unchanged; after, the stub, byte for byte (the
			// runs-dir it names is where the command ran).
			c := exec.Command(retval, append([]string{"replay", "--runs-dir", runs, "--run", v.run, "--call", v.id}, w.replay...)...)
			c.Stdin = bytes.NewReader(v.data)
			b, err := c.Output()
			b = bytes.ReplaceAll(b, []byte(runs), []byte(origRuns))
			switch {
			case err != nil:
				rep.losses = append(rep.losses, fmt.Sprintf("%s/%s: replay failed: %v; %s", v.run, v.id, err, where()))
			case bytes.Equal(b, stub):
			case shown:
				rep.losses = append(rep.losses, fmt.Sprintf("%s/%s printed, then replay printed %.80q; %s", v.run, v.id, b, where()))
			case !bytes.Equal(b, v.data):
				rep.losses = append(rep.losses, fmt.Sprintf("%s/%s: replay printed neither the stub nor the input: %.80q; %s", v.run, v.id, b, where()))
			}
		}
		b, code := resolve(v)
		whole := code == 0 && bytes.Equal(b, v.data)
		switch {
		case v.collected && shown && code != 3:
			rep.losses = append(rep.losses, fmt.Sprintf("%s/%s collected and reported, then resolve exit %d with %d bytes; %s", v.run, v.id, code, len(b), where()))
		case v.collected && !whole && code != 3:
			rep.losses = append(rep.losses, fmt.Sprintf("%s/%s neither whole nor collected: exit %d, %d of %d bytes; %s", v.run, v.id, code, len(b), len(v.data), where()))
		case !v.collected && shown && !whole:
			rep.losses = append(rep.losses, fmt.Sprintf("%s/%s printed, then resolve exit %d with %d of %d bytes; %s", v.run, v.id, code, len(b), len(v.data), where()))
		}
	}
	if w.step != "" {
		answered := bytes.Count(promisedText(rec.Ops, st.Crash), []byte("\n"))
		got := int64(0)
		if b, err := os.ReadFile(filepath.Join(runs, "r.values", ".steps", w.step+".json")); err == nil {
			var l struct{ Lookups int64 }
			json.NewDecoder(bytes.NewReader(b)).Decode(&l)
			got = l.Lookups
		}
		if got < int64(answered) {
			rep.losses = append(rep.losses, fmt.Sprintf("ledger counts %d lookups, %d were answered; %s", got, answered, where()))
		}
	}
	if gout, err := exec.Command(retval, "gc", "--runs-dir", runs, "--grace", "0s").CombinedOutput(); err != nil {
		damage(fmt.Sprintf("gc --grace 0s: %v: %s; %s", err, gout, where()))
		return
	}
	vr, out, err = verify(dir, w.runs)
	if err != nil || vr.Corrupt+vr.Missing+vr.Debris > 0 {
		damage(fmt.Sprintf("after gc, verify: %v %s; %s", err, out, where()))
	}
}

// shownAt is the number of promises printed once marker was: 0 for "",
// -1 when it never was.
func shownAt(ops []Op, marker string) int {
	if marker == "" {
		return 0
	}
	n := 0
	for _, op := range ops {
		if op.Kind == OpPromise {
			n++
			if bytes.Contains(op.Data, []byte(marker)) {
				return n
			}
		}
	}
	return -1
}

// promisedText is what the program printed before crash point c.
func promisedText(ops []Op, c int) []byte {
	var b []byte
	for _, op := range ops[:c] {
		if op.Kind == OpPromise {
			b = append(b, op.Data...)
		}
	}
	return b
}

func (r *report) line(w, model string) string {
	how := "exhaustive"
	if !r.exhaustive {
		how = "sampled"
	}
	var kinds []string
	for k, n := range r.debris {
		kinds = append(kinds, fmt.Sprintf("%s×%d", k, n))
	}
	sort.Strings(kinds)
	return fmt.Sprintf("%s %s: %d ops (%d fsyncs), %d states (%s), %d distinct, %d checked, %d losses, %d damaged, debris: %s",
		w, model, r.ops, r.fsyncs, r.total, how, r.unique, r.checked, len(r.losses), len(r.damage), strings.Join(kinds, " "))
}

// TestCrash explores every workload under both models and fails on any
// loss (a printed stub that does not read back, or that replay does not
// rebuild; an undercounting ledger; a run gc reported removed that reads
// again, or one it collects that reads neither whole nor collected) or
// damage (verify finds a corrupt or missing value, gc does not converge).
func TestCrash(t *testing.T) {
	strace := needStrace(t)
	for _, w := range workloads() {
		for _, model := range []string{"ordered", "weak"} {
			t.Run(w.name+"/"+model, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(*seed, 0))
				rep := explore(t, strace, w, model, nil, budget(), rng)
				t.Log(rep.line(w.name, model))
				fmt.Println(rep.line(w.name, model)) // the figures, with -v or without
				for _, l := range append(rep.losses, rep.damage...) {
					t.Error(l)
				}
			})
		}
	}
}

// notNeeded lists, per workload, the mutants (the Nth sync of each
// process left out) that no crash state can tell from the binary, and why
// the promise does not need that sync; TestCrashMutants fails on any
// other mutant that lives, and on a listed one that dies.
var notNeeded = map[string]map[int]string{}

// mutated are the workloads the mutation run covers: in the CI size, the
// retain into an existing and into a new runs-dir; with -crash.long,
// every workload.
func mutated() []workload {
	if *long {
		return workloads()
	}
	var ws []workload
	for _, w := range workloads() {
		if w.name == "retain-small" || w.name == "retain-new-runs-dir" {
			ws = append(ws, w)
		}
	}
	return ws
}

// TestCrashMutants leaves out one sync at a time from the write path
// (RETVAL_TEST_SKIP_FSYNC=N: the Nth sync of each process, file or
// directory) and explores each mutant under the weak model: a mutant is
// killed when a loss or damage is found. Every mutant must die, but for
// those notNeeded lists with the reason: a checker that kills none is
// broken, and one that lets a needed sync go unnoticed is too.
func TestCrashMutants(t *testing.T) {
	strace := needStrace(t)
	for _, w := range mutated() {
		t.Run(w.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(*seed, 0))
			base := explore(t, strace, w, "weak", nil, budget(), rng)
			for n := 1; ; n++ {
				rng := rand.New(rand.NewPCG(*seed, 0))
				rep := explore(t, strace, w, "weak", []string{fmt.Sprint("RETVAL_TEST_SKIP_FSYNC=", n)}, budget(), rng)
				if rep.fsyncs >= base.fsyncs {
					break // no process made n syncs: nothing was left out
				}
				killed := len(rep.losses)+len(rep.damage) > 0
				verdict := "alive"
				if killed {
					verdict = "killed"
				}
				fmt.Printf("%s mutant skip-fsync-%d: %s (%d losses, %d damaged of %d checked)\n", w.name, n, verdict, len(rep.losses), len(rep.damage), rep.checked)
				why, listed := notNeeded[w.name][n]
				switch {
				case !killed && !listed:
					t.Errorf("skip-fsync-%d lives: the explorer misses a loss, or the sync is not needed (then say why in notNeeded and docs/RELIABILITY.md)", n)
				case killed && listed:
					t.Errorf("skip-fsync-%d is listed as not needed (%s), yet it is killed: %s", n, why, append(rep.losses, rep.damage...)[0])
				}
			}
		})
	}
}
