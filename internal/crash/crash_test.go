package crash

import (
	"bytes"
	"encoding/json"
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

	"github.com/retval/retval/internal/s3test"
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
	s3test.StopShared()
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
	var todo []State
	for _, st := range sts {
		k := key{st.Build(rec.Before, rec.Ops).Sum(), st.Promised}
		if seen[k] {
			continue
		}
		seen[k] = true
		todo = append(todo, st)
	}
	rep.unique = len(todo)
	todo = choose(todo, limit, rng)
	for _, st := range todo {
		dir := t.TempDir()
		if err := st.Build(rec.Before, rec.Ops).Materialise(dir); err != nil {
			t.Fatal(err)
		}
		rep.checked++
		check(t, &rep, w, dir, filepath.Join(root, w.runs), st, rec, values, stub)
		os.RemoveAll(dir)
	}
	return rep
}

// choose picks at most limit of the distinct states to check. First, up
// to three quarters of the budget, the states built on purpose (not
// drawn) that follow a promise, where a loss shows: taken in turn from
// each promise count, the last first, so that every promise is checked;
// then the rest drawn from all that remain.
func choose(sts []State, limit int, rng *rand.Rand) []State {
	if len(sts) <= limit {
		return sts
	}
	rng.Shuffle(len(sts), func(i, j int) { sts[i], sts[j] = sts[j], sts[i] })
	byPromise := map[int][]State{}
	var levels []int
	var rest []State
	for _, st := range sts {
		if st.Drawn || st.Promised == 0 {
			rest = append(rest, st)
			continue
		}
		if byPromise[st.Promised] == nil {
			levels = append(levels, st.Promised)
		}
		byPromise[st.Promised] = append(byPromise[st.Promised], st)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(levels)))
	var out []State
	for len(out) < limit*3/4 {
		took := false
		for _, l := range levels {
			if q := byPromise[l]; len(q) > 0 && len(out) < limit*3/4 {
				out, byPromise[l], took = append(out, q[0]), q[1:], true
			}
		}
		if !took {
			break
		}
	}
	for _, l := range levels {
		rest = append(rest, byPromise[l]...)
	}
	return append(out, sample(rest, limit-len(out), rng)...)
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

// errCode is the code at the end of a one-line error.
var errCode = regexp.MustCompile(`^retval: .* \(([a-z_]+)\)$`)

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
	// resolve returns the value's bytes, or the error code resolve printed
	// (SPEC §5: "retval: resolve: <what> (<code>)"); unknown_reference
	// and collected share exit status 3, so the code tells them apart.
	resolve := func(v value) ([]byte, string) {
		c := exec.Command(retval, "resolve", "--runs-dir", runs, "--run", v.run, v.id, "--max-lookup-bytes", "0", "--max-step-bytes", "0")
		var stderr bytes.Buffer
		c.Stderr = &stderr
		b, err := c.Output()
		if err == nil {
			return b, ""
		}
		line, _, _ := strings.Cut(stderr.String(), "\n")
		if m := errCode.FindStringSubmatch(line); m != nil {
			return b, m[1]
		}
		return b, fmt.Sprintf("%v: %.200s", err, line)
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
		whole := code == "" && bytes.Equal(b, v.data)
		switch {
		case v.collected && shown && code != "collected":
			rep.losses = append(rep.losses, fmt.Sprintf("%s/%s collected and reported, then resolve %q with %d bytes; %s", v.run, v.id, code, len(b), where()))
		case v.collected && !whole && code != "collected":
			rep.losses = append(rep.losses, fmt.Sprintf("%s/%s neither whole nor collected: %q, %d of %d bytes; %s", v.run, v.id, code, len(b), len(v.data), where()))
		case !v.collected && shown && !whole:
			rep.losses = append(rep.losses, fmt.Sprintf("%s/%s printed, then resolve %q with %d of %d bytes; %s", v.run, v.id, code, len(b), len(v.data), where()))
		}
	}
	// A run written again after gc says collected for what gc took (its
	// tombstone goes when the run is made again; the record of the
	// collected ids stays).
	for _, v := range values {
		if !v.collected {
			continue
		}
		c := exec.Command(retval, append([]string{"retain", "--runs-dir", runs, "--run", v.run, "--call", "again"}, retainFlags...)...)
		c.Stdin = strings.NewReader("written again\n")
		if out, err := c.CombinedOutput(); err != nil {
			damage(fmt.Sprintf("retain into %s again: %v: %s; %s", v.run, err, out, where()))
			continue
		}
		b, code := resolve(v)
		whole := code == "" && bytes.Equal(b, v.data)
		switch {
		case st.Promised >= v.after && code != "collected":
			rep.losses = append(rep.losses, fmt.Sprintf("%s/%s collected and reported, then, the run written again, resolve %q with %d bytes; %s", v.run, v.id, code, len(b), where()))
		case !whole && code != "collected":
			rep.losses = append(rep.losses, fmt.Sprintf("%s/%s, the run written again, neither whole nor collected: %q, %d of %d bytes; %s", v.run, v.id, code, len(b), len(v.data), where()))
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
	for i, w := range workloads() {
		for _, model := range []string{"ordered", "weak"} {
			t.Run(w.name+"/"+model, func(t *testing.T) {
				t.Parallel() // each in a root of its own; -parallel bounds them
				// A workload's own: its setup keeps its inputs in the
				// closure, which the other model's run must not share.
				w := workloads()[i]
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
var notNeeded = map[string]map[string]string{
	"gc-one-run": {
		"2": "the sync of .retval after making .retval/trash: the next sync of .retval, after making .retval/tombstones, comes before anything is put in the trash",
		"5": "the sync of the tombstone directory after the collected ids' record is renamed in: the sync after the tombstone's rename covers it, before the run is moved",
		"8": "the sync of the trash after the run is renamed into it: the model counts a rename as persisted by a sync of either of its directories (as ext4 and XFS journal it, one transaction), and the runs-dir's sync follows",
		"9": "the sync of the runs-dir after the run is renamed out: as 8, the trash's sync before it covers the rename in the model",
	},
}

// pairs lists mutants leaving out two syncs that are each not needed
// alone, one covering for the other: each pair must die.
var pairs = map[string][]string{"gc-one-run": {"8,9"}}

// mutated are the workloads the mutation run covers: in the CI size, the
// retain into an existing and into a new runs-dir, a step's lookups, and
// gc collecting one run; with -crash.long, every workload whose syncs
// come in one order (gc collecting several runs and gc racing a retain
// interleave theirs between threads or processes).
func mutated() []workload {
	var ws []workload
	for _, w := range append(workloads(), gcOneWorkload()) {
		switch w.name {
		case "retain-small", "retain-new-runs-dir", "resolve-step", "gc-one-run":
			ws = append(ws, w)
		case "gc-idle-runs", "gc-racing-retain":
		default:
			if *long {
				ws = append(ws, w)
			}
		}
	}
	return ws
}

// TestCrashMutants leaves out one sync at a time from the write path
// (RETVAL_TEST_SKIP_FSYNC=N: the Nth sync of each process, file or
// directory) and explores each mutant under the weak model: a mutant is
// killed when a loss or damage is found. Every mutant must die, but for
// those notNeeded lists with the reason (and the pairs of those, which
// must die together): a checker that kills none is broken, and one that
// lets a needed sync go unnoticed is too.
func TestCrashMutants(t *testing.T) {
	strace := needStrace(t)
	for _, w := range mutated() {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(*seed, 0))
			base := explore(t, strace, w, "weak", nil, budget(), rng)
			mutant := func(skip string) (killed, done bool) {
				rng := rand.New(rand.NewPCG(*seed, 0))
				rep := explore(t, strace, w, "weak", []string{"RETVAL_TEST_SKIP_FSYNC=" + skip}, budget(), rng)
				if rep.fsyncs >= base.fsyncs {
					return false, true // no process made that many syncs: nothing was left out
				}
				killed = len(rep.losses)+len(rep.damage) > 0
				verdict := "alive"
				if killed {
					verdict = "killed: " + append(rep.losses, rep.damage...)[0]
				}
				fmt.Printf("%s mutant skip-fsync-%s: %d losses, %d damaged of %d checked; %.300s\n", w.name, skip, len(rep.losses), len(rep.damage), rep.checked, verdict)
				return killed, false
			}
			for n := 1; ; n++ {
				skip := fmt.Sprint(n)
				killed, done := mutant(skip)
				if done {
					if n == 1 && base.fsyncs > 0 {
						t.Errorf("RETVAL_TEST_SKIP_FSYNC=1 left no sync out of %d: the switch does not reach the binary", base.fsyncs)
					}
					break
				}
				why, listed := notNeeded[w.name][skip]
				switch {
				case !killed && !listed:
					t.Errorf("skip-fsync-%s lives: the explorer misses a loss, or the sync is not needed (then say why in notNeeded and docs/RELIABILITY.md)", skip)
				case killed && listed:
					t.Errorf("skip-fsync-%s is listed as not needed (%s), yet it is killed", skip, why)
				}
			}
			for _, skip := range pairs[w.name] {
				if killed, _ := mutant(skip); !killed {
					t.Errorf("skip-fsync-%s lives: the two syncs cover for each other, yet leaving out both is not seen", skip)
				}
			}
		})
	}
}
