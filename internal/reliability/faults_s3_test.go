package reliability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retval/retval/internal/s3fake"
	"github.com/retval/retval/pkg/expand"
	"github.com/retval/retval/pkg/gc"
	"github.com/retval/retval/pkg/peek"
	"github.com/retval/retval/pkg/retain"
	"github.com/retval/retval/pkg/retain/s3store"
)

// TestS3FaultMatrix runs each operation of the store on object storage —
// retain (a small value, a multipart one, the same bytes again), peek
// (lines of a plain and of a zstd value, a search through a whole value),
// resolve, a step's lookups (resolve --step: an existing ledger and a new
// one), gc and verify — once for every call the operation makes and every
// kind of fault, the fault injected into that one call: a 500, a 503
// SlowDown, a connection reset before the call, the answer dropped after
// the call took effect (with and without the client's retry), a GET's
// body cut half-way, and the call held while a competing operation runs
// to its end (gc collecting the run; another writer; another spender of
// the step). The operations that write (retain, a step, gc) run again
// under two faults: any first one, then a 500, a reset or a dropped
// answer in each write made after it — how an operation cleans up after
// a failure must survive a failure of its own. After each case it checks
// the store's promises:
//
//   - a stub is printed only for a value that exists and reads back
//     exactly, then and after a later gc; otherwise the input goes out
//     verbatim, whole, and retain does not fail;
//   - reads (peek, resolve, a step's answers) are exact or an error;
//   - a step's ledger never counts fewer lookups than were answered;
//   - verify fails, or reports what a fault-free verify reports plus at
//     most the value it could not read, as corrupt with the failure named;
//   - nothing is damaged (verify finds nothing corrupt or missing, the
//     values set up are as they were), and gc converges: a later gc
//     without faults finishes what was left half done (markers, a lease,
//     debris) and leaves a store verify finds clean, and a gc once every
//     run is idle leaves only tombstones and no unfinished upload.
//
// Faults are chosen by rule — which call (its operation, key, range or
// part), which of the calls so described — never by time: fixed inputs,
// the fake's clock. What can vary between runs is the store's own
// concurrency (parts uploaded three at a time, lookups in parallel),
// which may leave a second fault's call unmade. Under -short and -race
// the single faults alone run. go test -v prints the counts, which are
// in docs/RELIABILITY.md.
func TestS3FaultMatrix(t *testing.T) {
	base := newMatrixBase(t)
	m := &matrixTally{t: t}
	for _, op := range matrixOps {
		t.Run(op.name, func(t *testing.T) {
			ref := base.world()
			ref.prepare()
			want := op.run(ref)
			ref.faults.Wait()
			sites := sitesOf(ref.faults.Take(), nil)
			if len(sites) == 0 {
				t.Fatalf("%s made no calls", op.name)
			}
			for _, s := range sites {
				for _, kind := range matrixKinds {
					if !kind.applies(s.call) || kind.delay && op.race == nil {
						continue
					}
					first := &injection{site: s, kind: kind}
					c := m.runCase(t, base, op, want, first)
					if !op.twice || quick() || kind.delay || !first.injected {
						continue
					}
					// A second fault, into each write made after the
					// first: how the operation cleans up after a failure
					// must survive a failure of its own.
					for _, s2 := range sitesOf(c.calls, func(call s3fake.Call) bool { return call.Seq > first.seq && call.Writes() }) {
						for _, kind2 := range secondKinds {
							if !kind2.applies(s2.call) {
								continue
							}
							first := &injection{site: s, kind: kind}
							m.runCase(t, base, op, want, first, &injection{site: s2, kind: kind2, after: first})
						}
					}
				}
			}
		})
	}
	m.report()
}

// runCase runs op under the faults, checks its promises and returns the
// case.
func (m *matrixTally) runCase(t *testing.T, base *matrixBase, op matrixOp, want outcome, faults ...*injection) *matrixCase {
	names := make([]string, len(faults))
	for i, f := range faults {
		names[i] = f.kind.name + " on " + f.site.String()
	}
	w := base.world()
	w.prepare()
	c := &matrixCase{t: t, m: m, name: op.name + ": " + strings.Join(names, ", then "), w: w, op: op}
	c.run(faults)
	m.count(op, faults)
	c.checkOp(want)
	c.converge()
	return c
}

// matrixTally counts the matrix's work.
type matrixTally struct {
	t          *testing.T
	mu         sync.Mutex
	cases      map[string]map[string]int // op → fault kind (or "two faults") → cases
	single     int                       // cases under one fault
	double     int                       // cases under two
	unreached  []string                  // cases whose fault's call was not made
	unreached2 []string                  // two-fault cases whose second fault's call was not made
	injected   map[string]int            // faults injected, by kind
	promises   int
	broken     int
	seen       map[string]int // broken promises reported, by op and promise
}

// count records a case run under faults.
func (m *matrixTally) count(op matrixOp, faults []*injection) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cases == nil {
		m.cases, m.injected = map[string]map[string]int{}, map[string]int{}
	}
	if m.cases[op.name] == nil {
		m.cases[op.name] = map[string]int{}
	}
	col := faults[0].kind.name
	if len(faults) == 1 {
		m.single++
	} else {
		m.double++
		col = "two faults"
	}
	m.cases[op.name][col]++
	for _, f := range faults {
		if f.injected {
			m.injected[f.kind.name]++
		}
	}
	if len(faults) == 2 && (!faults[0].injected || !faults[1].injected) {
		m.unreached2 = append(m.unreached2, op.name+": "+faults[0].kind.name+" on "+faults[0].site.String()+", then "+faults[1].kind.name+" on "+faults[1].site.String())
	}
	if len(faults) == 1 && !faults[0].injected {
		m.unreached = append(m.unreached, op.name+": "+faults[0].kind.name+" on "+faults[0].site.String())
	}
}

// report logs the counts (go test -v shows them): a table of cases by
// operation and fault kind, the faults injected by kind, and the
// promises checked and broken.
func (m *matrixTally) report() {
	kinds := []string{}
	for _, k := range matrixKinds {
		kinds = append(kinds, k.name)
	}
	kinds = append(kinds, "two faults")
	var b strings.Builder
	fmt.Fprintf(&b, "cases by operation and fault:\n| operation | %s | all |\n|---|%s---|\n", strings.Join(kinds, " | "), strings.Repeat("---|", len(kinds)))
	total := map[string]int{}
	for _, op := range matrixOps {
		fmt.Fprintf(&b, "| %s |", op.name)
		all := 0
		for _, k := range kinds {
			n := m.cases[op.name][k]
			total[k] += n
			all += n
			fmt.Fprintf(&b, " %d |", n)
		}
		fmt.Fprintf(&b, " %d |\n", all)
	}
	fmt.Fprintf(&b, "| all |")
	for _, k := range kinds {
		fmt.Fprintf(&b, " %d |", total[k])
	}
	fmt.Fprintf(&b, " %d |\n", m.single+m.double)
	fmt.Fprintf(&b, "faults injected by kind:")
	sum := 0
	for _, k := range kinds[:len(kinds)-1] {
		fmt.Fprintf(&b, " %s %d;", k, m.injected[k])
		sum += m.injected[k]
	}
	fmt.Fprintf(&b, " in all %d\n", sum)
	fmt.Fprintf(&b, "%d operations run: %d under one fault, %d under two; %d promises checked, %d broken\n",
		m.single+m.double, m.single, m.double, m.promises, m.broken)
	fmt.Fprintf(&b, "%d single-fault cases whose faulted call was not made:\n", len(m.unreached))
	for _, u := range m.unreached {
		fmt.Fprintf(&b, "  %s\n", u)
	}
	fmt.Fprintf(&b, "%d two-fault cases whose second call was not made:\n", len(m.unreached2))
	for _, u := range m.unreached2 {
		fmt.Fprintf(&b, "  %s\n", u)
	}
	m.t.Log(b.String())
}

// The clocks, the fake server's and the stores' alike: the store is set
// up at t0, and every case runs two days later, at t1, when the runs set
// up are idle (collectIdle) and what a case writes is not.
var (
	t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	t1 = t0.Add(48 * time.Hour)
)

const (
	matrixRun  = "r"
	matrixRun2 = "r2"
	partSize   = 128 << 10
)

// matrixBase is the store every case starts from: set up once, copied.
type matrixBase struct {
	t      *testing.T
	bucket *s3fake.Bucket
	inputs map[string][]byte // call → the bytes retained under it in run r
	other  []byte            // run r2's value
	doc    []byte            // a JSON document, for the pointer lookups
	// objects are the ETags of the objects each value set up is made of
	// (descriptor, content, index), by run/call and key.
	objects map[string]map[string]string
}

func newMatrixBase(t *testing.T) *matrixBase {
	b := &matrixBase{t: t, inputs: map[string][]byte{}}
	r := rand.New(rand.NewPCG(29, 2)) // fixed: every run the same store
	var text bytes.Buffer
	for i := 1; text.Len() < 1200<<10; i++ {
		fmt.Fprintf(&text, "line %d of a long tool result %d\n", i, r.IntN(1000))
	}
	items := make([]map[string]any, 600)
	for i := range items {
		items[i] = map[string]any{"name": fmt.Sprintf("item-%d", i), "weight": r.IntN(1 << 20)}
	}
	b.doc, _ = json.Marshal(map[string]any{"items": items})
	b.inputs["big"] = text.Bytes()
	b.inputs["zbig"] = text.Bytes()
	b.inputs["doc"] = b.doc
	b.other = bytes.Repeat([]byte("another run's result\n"), 300)

	w := &world{base: b, now: t0}
	w.bucket = s3fake.NewBucket(w.clock)
	w.bucket.MinPartSize = 64 << 10
	w.faults = s3fake.Wrap(w.bucket)
	w.clean = w.store(w.bucket, t0)
	for _, call := range []string{"doc", "big", "zbig"} {
		comp := "none"
		if call == "zbig" {
			comp = "zstd"
		}
		w.retain(w.clean, matrixRun, call, b.inputs[call], comp)
	}
	w.retain(w.clean, matrixRun2, "other", b.other, "none")
	// The step "s1" has a ledger: a case's spending replaces it.
	rs := &expand.Resolver{Store: w.clean, Run: matrixRun}
	if _, err := rs.Step("s1", lookups(t, `{"$ref":"big","lines":[1,2]}`), stepBudget); err != nil {
		t.Fatal(err)
	}
	b.bucket = w.bucket
	b.objects = map[string]map[string]string{}
	for _, rc := range b.values() {
		prefix := matrixLoc.Prefix + "/" + rc[0] + ".values/" + rc[1] + "."
		b.objects[rc[0]+"/"+rc[1]] = map[string]string{}
		for _, k := range b.bucket.Keys() {
			if strings.HasPrefix(k, prefix) {
				o, err := b.bucket.HeadObject(t.Context(), k)
				if err != nil {
					t.Fatal(err)
				}
				b.objects[rc[0]+"/"+rc[1]][k] = o.ETag
			}
		}
	}
	return b
}

// values are the values set up, as run and call.
func (b *matrixBase) values() [][2]string {
	var out [][2]string
	for _, call := range slices.Sorted(maps.Keys(b.inputs)) {
		out = append(out, [2]string{matrixRun, call})
	}
	return append(out, [2]string{matrixRun2, "other"})
}

// input is what the value set up as run/call holds.
func (b *matrixBase) input(run, call string) []byte {
	if run == matrixRun2 {
		return b.other
	}
	return b.inputs[call]
}

// world is one case's store: a copy of the base bucket on the fake's
// clock, reached fault-free (clean) and through the faults (faulty).
type world struct {
	base   *matrixBase
	mu     sync.Mutex
	now    time.Time
	bucket *s3fake.Bucket
	faults *s3fake.Faults
	clean  *retain.Store
	faulty *retain.Store
	// spentBefore is the step ledger's count before the case.
	spentBefore map[string]int64
}

func (b *matrixBase) world() *world {
	w := &world{base: b, now: t1, spentBefore: map[string]int64{}}
	w.bucket = b.bucket.Clone(w.clock)
	w.faults = s3fake.Wrap(w.bucket)
	w.clean = w.store(w.bucket, t1)
	w.faulty = w.store(w.faults, t1)
	return w
}

func (w *world) clock() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.now
}

func (w *world) setClock(t time.Time) {
	w.mu.Lock()
	w.now = t
	w.mu.Unlock()
}

var matrixLoc = s3store.Location{Bucket: "matrix", Prefix: "fleet"}

// store is a Store on the world's bucket through api, whose clock says
// now.
func (w *world) store(api s3store.API, now time.Time) *retain.Store {
	b := s3store.New(api, matrixLoc)
	b.PartSize = partSize
	s := retain.OpenBucket(b)
	s.Now = func() time.Time { return now }
	return s
}

var retainLimits = retain.Limits{Threshold: retain.Unlimited, MaxValueSize: retain.Unlimited, MaxRunBytes: retain.Unlimited}

func (w *world) retain(s *retain.Store, run, call string, in []byte, comp string) {
	var out bytes.Buffer
	res, err := s.Retain(bytes.NewReader(in), &out, retain.RetainOptions{Run: run, Call: call, Compress: comp, Limits: retainLimits})
	if err != nil || !res.Retained {
		w.base.t.Fatalf("setting up %s/%s: %+v, %v", run, call, res, err)
	}
}

// prepare records what the case's checks compare against.
func (w *world) prepare() {
	for _, step := range []string{"s1", "s2"} {
		rs := &expand.Resolver{Store: w.clean, Run: matrixRun}
		sp, err := rs.StepSpent(step)
		if err != nil {
			w.base.t.Fatal(err)
		}
		w.spentBefore[step] = sp.Lookups
	}
	w.faults.Take()
}

var stepBudget = expand.Budget{Lookups: 1000, LookupBytes: retain.Unlimited, StepBytes: retain.Unlimited}

func lookups(t *testing.T, refs ...string) []expand.Lookup {
	var out []expand.Lookup
	for _, r := range refs {
		ref, err := expand.ParseRef([]byte(r))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, expand.Lookup{Ref: ref})
	}
	return out
}

// outcome is what an operation returned, in a form a case compares.
type outcome struct {
	err     error
	text    string   // a page or a report, as JSON
	answers []string // a lookup's answers, "" for one that failed
	res     *retain.Result
	out     []byte // what retain printed
	run     string // where retain put it
	call    string
	in      []byte
	raced   *outcome // the competing operation's, for a held call
}

type matrixOp struct {
	name string
	run  func(w *world) outcome
	// race competes with the operation while one of its calls is held
	// (nil: no delay cases).
	race func(w *world) outcome
	// collects says the operation (or its race) may collect run r: its
	// values may then read as collected.
	collects bool
	// twice: the operation writes, and runs again under two faults, the
	// second in each write made after the first.
	twice bool
	check func(c *matrixCase, got, want outcome)
}

func retainOp(name, call string, in func(b *matrixBase) []byte, comp string) matrixOp {
	return matrixOp{
		name: name,
		run: func(w *world) outcome {
			data := in(w.base)
			var out bytes.Buffer
			res, err := w.faulty.Retain(bytes.NewReader(data), &out, retain.RetainOptions{Run: matrixRun, Call: call, Compress: comp, Limits: retainLimits})
			return outcome{err: err, res: res, out: out.Bytes(), run: matrixRun, call: call, in: data}
		},
		race:     gcRace,
		collects: true,
		twice:    true,
		check:    checkRetain,
	}
}

// collectIdle is gc's policy in the matrix: a run idle for a day is
// collected.
var collectIdle = gc.Options{MaxAge: 24 * time.Hour, Workers: 1}

// gcRace collects the idle runs, fault-free.
func gcRace(w *world) outcome {
	_, err := gc.Collect(w.store(w.bucket, t1), collectIdle)
	return outcome{err: err}
}

func numberedInput(n int) func(*matrixBase) []byte {
	return func(*matrixBase) []byte {
		var b bytes.Buffer
		for i := 1; b.Len() < n; i++ {
			fmt.Fprintf(&b, "new line %d\n", i)
		}
		return b.Bytes()
	}
}

func readOp(name string, read func(s *retain.Store) (string, error)) matrixOp {
	return matrixOp{
		name: name,
		run: func(w *world) outcome {
			text, err := read(w.faulty)
			return outcome{err: err, text: text}
		},
		race:     gcRace,
		collects: true,
		check: func(c *matrixCase, got, want outcome) {
			c.promise(got.err != nil || got.text == want.text, "a read answered %.200q, want %.200q", got.text, want.text)
		},
	}
}

func pageOf(v any, err error) (string, error) {
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(v)
	return string(b), err
}

func openAnd(s *retain.Store, call string, f func(v *retain.Value) (any, error)) (string, error) {
	v, err := s.OpenValue(matrixRun, call)
	if err != nil {
		return "", err
	}
	defer v.Close()
	return pageOf(f(v))
}

var resolveRefs = []string{
	`{"$ref":"big","lines":[30000,30003]}`,
	`{"$ref":"doc","pointer":"/items/321/name"}`,
	`{"$ref":"zbig","bytes":[1000000,1000100]}`,
}

func answersOf(as []expand.Answer) []string {
	out := make([]string, len(as))
	for i, a := range as {
		if a.Err == nil {
			out[i] = "ok:" + string(a.Text)
		}
	}
	return out
}

func stepOp(name, step string) matrixOp {
	return matrixOp{
		name: name,
		run: func(w *world) outcome {
			rs := &expand.Resolver{Store: w.faulty, Run: matrixRun}
			as, err := rs.Step(step, lookups(w.base.t, resolveRefs...), stepBudget)
			return outcome{err: err, answers: answersOf(as), call: step}
		},
		race: func(w *world) outcome {
			rs := &expand.Resolver{Store: w.clean, Run: matrixRun}
			as, err := rs.Step(step, lookups(w.base.t, resolveRefs[:1]...), stepBudget)
			return outcome{err: err, answers: answersOf(as)}
		},
		twice: true,
		check: func(c *matrixCase, got, want outcome) {
			checkAnswers(c, got, want)
			answered := int64(0)
			if got.err == nil {
				answered = int64(len(resolveRefs))
			}
			if r := got.raced; r != nil && r.err == nil {
				answered++
			}
			rs := &expand.Resolver{Store: c.w.clean, Run: matrixRun}
			sp, err := rs.StepSpent(step)
			c.promise(err == nil && sp.Lookups >= c.w.spentBefore[step]+answered,
				"step %s's ledger counts %d lookups (%v), %d before and %d answered since", step, sp.Lookups, err, c.w.spentBefore[step], answered)
		},
	}
}

func checkAnswers(c *matrixCase, got, want outcome) {
	if got.err != nil {
		return
	}
	c.promise(len(got.answers) == len(want.answers), "%d answers, want %d", len(got.answers), len(want.answers))
	for i := range min(len(got.answers), len(want.answers)) {
		c.promise(got.answers[i] == "" || got.answers[i] == want.answers[i], "answer %d is %.200q, want %.200q", i, got.answers[i], want.answers[i])
	}
}

var matrixOps = []matrixOp{
	retainOp("retain", "n1", numberedInput(30<<10), "none"),
	retainOp("retain-multipart", "n2", numberedInput(300<<10), "none"),
	retainOp("retain-again", "doc", func(b *matrixBase) []byte { return b.doc }, "none"),
	readOp("peek-lines", func(s *retain.Store) (string, error) {
		return openAnd(s, "big", func(v *retain.Value) (any, error) { return peek.Lines(v, 30000, 30010, peek.Caps{}) })
	}),
	readOp("peek-lines-zstd", func(s *retain.Store) (string, error) {
		return openAnd(s, "zbig", func(v *retain.Value) (any, error) { return peek.Lines(v, 30000, 30010, peek.Caps{}) })
	}),
	readOp("peek-query", func(s *retain.Store) (string, error) {
		return openAnd(s, "big", func(v *retain.Value) (any, error) {
			return peek.Query(v, peek.QueryOptions{Query: "line 36000 of"}, peek.Caps{})
		})
	}),
	{
		name: "resolve",
		run: func(w *world) outcome {
			rs := &expand.Resolver{Store: w.faulty, Run: matrixRun}
			as, err := rs.Lookups(lookups(w.base.t, resolveRefs...), stepBudget, &expand.Spent{})
			return outcome{err: err, answers: answersOf(as)}
		},
		race:     gcRace,
		collects: true,
		check:    checkAnswers,
	},
	stepOp("step", "s1"),
	stepOp("step-new", "s2"),
	{
		name: "gc",
		run: func(w *world) outcome {
			rep, err := gc.Collect(w.store(w.faults, t1), collectIdle)
			return outcome{err: err, text: fmt.Sprint(rep != nil)}
		},
		// Another writer retains into the run while gc's call is held.
		race: func(w *world) outcome {
			in := numberedInput(5 << 10)(w.base)
			var out bytes.Buffer
			res, err := w.clean.Retain(bytes.NewReader(in), &out, retain.RetainOptions{Run: matrixRun, Call: "late", Limits: retainLimits})
			return outcome{err: err, res: res, out: out.Bytes(), run: matrixRun, call: "late", in: in}
		},
		collects: true,
		twice:    true,
		check: func(c *matrixCase, got, want outcome) {
			if got.raced != nil {
				checkRetain(c, *got.raced, outcome{})
			}
		},
	},
	{
		name: "verify",
		run: func(w *world) outcome {
			rep, err := w.faulty.Verify(retain.VerifyOptions{})
			text, _ := pageOf(rep, nil)
			return outcome{err: err, text: text}
		},
		race:     gcRace,
		collects: true,
		check: func(c *matrixCase, got, want outcome) {
			if got.err != nil {
				return
			}
			var rep, ref retain.VerifyReport
			json.Unmarshal([]byte(got.text), &rep)
			json.Unmarshal([]byte(want.text), &ref)
			if got.raced != nil {
				c.promise(rep.Corrupt == 0 && rep.Missing == 0, "verify beside a collection reported %s", got.text)
				return
			}
			// Every value is checked, and the problems are those a
			// fault-free verify reports, plus at most one for the failed
			// call: the value it could not read, reported corrupt (exit 1)
			// with the failure named — never missing (its content is
			// there), and never left out of a clean report.
			key := func(p retain.Problem) string { return fmt.Sprintf("%s/%s %s", p.Run, p.File, p.Kind) }
			want2 := map[string]int{}
			for _, p := range ref.Problems {
				want2[key(p)]++
			}
			var extra []retain.Problem
			for _, p := range rep.Problems {
				if want2[key(p)] > 0 {
					want2[key(p)]--
				} else {
					extra = append(extra, p)
				}
			}
			lost := 0
			for _, n := range want2 {
				lost += n
			}
			c.promise(rep.Values == ref.Values && rep.Runs == ref.Runs && lost == 0 && len(extra) <= 1,
				"verify reported %s, want %s and at most one problem more", got.text, want.text)
			for _, p := range extra {
				c.promise(p.Kind == retain.ProblemCorrupt && (strings.Contains(p.Message, "injected") || strings.Contains(p.Message, io.ErrUnexpectedEOF.Error())),
					"verify reported %+v for a value it could not read: want it corrupt, with the failure named", p)
			}
		},
	},
}

// checkRetain: the stub of a value that reads back exactly, or the input
// verbatim, whole; never part of either.
// An error is a broken promise too: the matrix's retains conflict with
// nothing and have no bounded policy, so a failure of the store is what
// made it, which retain answers with the input (exit 0), never with an
// error that leaves the output unprinted.
func checkRetain(c *matrixCase, got, _ outcome) {
	switch {
	case got.err != nil:
		c.promise(false, "retain failed (%v) and printed %d bytes of its %d: the output is lost", got.err, len(got.out), len(got.in))
	case got.res.Retained:
		c.promise(len(got.out) == 0 && strings.HasPrefix(got.res.Stub, "[retained #"), "a retained value printed %d bytes, and its stub is %.100q", len(got.out), got.res.Stub)
		c.readsBack(got.run, got.call, got.in, false, "the value of a stub")
		c.stubbed = append(c.stubbed, got)
	default:
		c.promise(got.res.Verbatim && bytes.Equal(got.out, got.in), "retain printed %d bytes of %d, neither a stub nor the input (verbatim %v)", len(got.out), len(got.in), got.res.Verbatim)
	}
}

// site is one call an operation makes: its description, and which of
// the calls so described it is.
type site struct {
	call s3fake.Call
	id   string
	nth  int
}

func (s site) String() string {
	if s.nth == 0 {
		return s.id
	}
	return fmt.Sprintf("%s (#%d)", s.id, s.nth+1)
}

// siteID describes a call as a site: a read record's key ends in random
// digits of its writer's, the same in no two runs, which the description
// leaves out.
func siteID(c s3fake.Call) string {
	return readRecord.ReplaceAllString(c.String(), "$1*")
}

var readRecord = regexp.MustCompile(`(/\.reads/[0-9]+-)[0-9a-f]+`)

// sitesOf are the sites of the calls keep selects (nil: all), in order
// of their descriptions.
func sitesOf(calls []s3fake.Call, keep func(s3fake.Call) bool) []site {
	seen := map[string]int{}
	var out []site
	for _, c := range calls {
		if keep != nil && !keep(c) {
			continue
		}
		id := siteID(c)
		out = append(out, site{call: c, id: id, nth: seen[id]})
		seen[id]++
	}
	slices.SortStableFunc(out, func(a, b site) int {
		if c := strings.Compare(a.id, b.id); c != 0 {
			return c
		}
		return a.nth - b.nth
	})
	return out
}

type matrixKind struct {
	name    string
	fault   s3fake.Fault
	delay   bool
	applies func(s3fake.Call) bool
}

func anyCall(s3fake.Call) bool { return true }

var (
	kind500      = matrixKind{name: "500", fault: s3fake.InternalError(), applies: anyCall}
	kindSlowDown = matrixKind{name: "503 SlowDown", fault: s3fake.SlowDown(), applies: anyCall}
	kindReset    = matrixKind{name: "reset", fault: s3fake.Reset(), applies: anyCall}
	kindDrop     = matrixKind{name: "drop", fault: s3fake.Drop(), applies: anyCall}
	// The answer lost, and the call sent again by the client, as the
	// AWS SDK retries after a connection error: a write's second answer
	// (a conditional one's 412) is what its caller sees.
	kindDropRetry = matrixKind{name: "drop+retry", fault: s3fake.DropRetried(), applies: s3fake.Call.Writes}
	kindTruncate  = matrixKind{name: "truncate", fault: s3fake.Truncate(), applies: func(c s3fake.Call) bool { return c.Op == s3fake.OpGet }}
	// The call held while a competing operation runs to its end.
	kindDelay = matrixKind{name: "delay", delay: true, applies: anyCall}
)

var matrixKinds = []matrixKind{kind500, kindSlowDown, kindReset, kindDrop, kindDropRetry, kindTruncate, kindDelay}

// secondKinds are the kinds of a second fault: the server refused the
// call, the connection failed before it, or the call took effect and its
// answer was lost — the three outcomes a caller tells apart.
var secondKinds = []matrixKind{kind500, kindReset, kindDrop}

// injection is one fault of a case: its kind, into the call at site —
// of the calls made after the fault after went into, when after is set.
type injection struct {
	site  site
	kind  matrixKind
	after *injection
	// Set as the operation runs (under the Faults' lock, read once it
	// is over):
	seen     int  // calls the rule selected
	seq      int  // the call's number the fault went into; 0 if none
	injected bool // the fault did something (a cut body was cut)
}

// match selects the calls of the injection's site.
func (in *injection) match(c s3fake.Call) bool {
	if in.after != nil && (in.after.seq == 0 || c.Seq <= in.after.seq) {
		return false
	}
	if siteID(c) != in.site.id {
		return false
	}
	if in.seen++; in.seen == in.site.nth+1 {
		in.seq = c.Seq
	}
	return true
}

// matrixCase is one operation under one fault, or two.
type matrixCase struct {
	t       *testing.T
	m       *matrixTally
	name    string
	w       *world
	op      matrixOp
	got     outcome
	calls   []s3fake.Call // the calls the operation made
	stubbed []outcome     // retains that printed a stub
}

// promise counts a promise checked, and reports it when it is broken: the
// first few cases of each op that break the same promise (the count of
// the rest is in the summary).
func (c *matrixCase) promise(ok bool, format string, args ...any) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	c.m.promises++
	if ok {
		return
	}
	c.m.broken++
	if c.m.seen == nil {
		c.m.seen = map[string]int{}
	}
	if k := c.op.name + " " + format; c.m.seen[k] < 3 {
		c.m.seen[k]++
		c.t.Errorf("%s: "+format, append([]any{c.name}, args...)...)
	}
}

// run runs the operation with the faults on their calls. A delay holds
// its call while the operation's race runs, fault-free, to its end; then
// the call goes on.
func (c *matrixCase) run(faults []*injection) {
	w := c.w
	gate, held := make(chan struct{}), make(chan struct{})
	var once sync.Once
	delayed := false
	for _, in := range faults {
		fault := in.kind.fault
		if in.kind.delay {
			delayed = true
			fault = s3fake.Delay(gate)
			fault.Held = func(s3fake.Call) { once.Do(func() { close(held) }) }
		}
		w.faults.Add(s3fake.Rule{Match: in.match, Skip: in.site.nth, Times: 1, Fault: fault})
	}
	if !delayed {
		c.got = c.op.run(w)
	} else {
		done := make(chan outcome)
		go func() { done <- c.op.run(w) }()
		select {
		case <-held:
			r := c.op.race(w)
			close(gate)
			c.got = <-done
			c.got.raced = &r
		case c.got = <-done:
			close(gate)
		}
	}
	w.faults.Wait()
	w.faults.Clear()
	c.calls = w.faults.Take()
	for _, in := range faults {
		in.injected = in.seq != 0
		if in.kind.fault.Kind == s3fake.KindTruncate {
			in.injected = w.faults.Injected(s3fake.KindTruncate) > 0
		}
	}
}

func (c *matrixCase) checkOp(want outcome) {
	c.op.check(c, c.got, want)
}

// readsBack checks that call of run reads back as in, whole; collectedOK
// lets it say collected instead, or unknown (a collected run written into
// again holds only what was written since).
func (c *matrixCase) readsBack(run, call string, in []byte, collectedOK bool, what string) {
	got, err := readAll(c.w.clean, run, call)
	if code := retain.CodeOf(err); err != nil && collectedOK && (code == retain.CodeCollected || code == retain.CodeUnknownReference) {
		c.promise(true, "")
		return
	}
	c.promise(err == nil && bytes.Equal(got, in), "%s %s/%s reads back %d bytes of %d: %v", what, run, call, len(got), len(in), err)
}

// intact checks that the value set up as run/call is as it was: each
// object it is made of the very one set up (its ETag is its content's
// MD5), or else it reads back whole (retain-again may write it anew), or
// it says collected where collectedOK.
func (c *matrixCase) intact(run, call string, collectedOK bool) {
	same := true
	for k, etag := range c.w.base.objects[run+"/"+call] {
		o, err := c.w.bucket.HeadObject(c.t.Context(), k)
		same = same && err == nil && o.ETag == etag
	}
	if same {
		c.promise(true, "")
		return
	}
	c.readsBack(run, call, c.w.base.input(run, call), collectedOK, "value")
}

func readAll(s *retain.Store, run, call string) ([]byte, error) {
	v, err := s.OpenValue(run, call)
	if err != nil {
		return nil, err
	}
	defer v.Close()
	return io.ReadAll(v.Section(0, v.Size()))
}

// converge checks the store after the case, fault-free: nothing damaged
// and every value there that was; a gc two hours on finishes what the
// case left half done and leaves a store verify finds clean; a gc two
// days on, every run idle, leaves only tombstones.
func (c *matrixCase) converge() {
	w := c.w
	// The values set up read back whole, unless the case collected them
	// (gc did, or a gc raced the operation).
	collected := c.op.name == "gc" || c.op.collects && c.got.raced != nil
	values := func() {
		for _, rc := range w.base.values() {
			c.intact(rc[0], rc[1], collected)
		}
		for _, s := range c.stubbed {
			c.readsBack(s.run, s.call, s.in, false, "the value of a stub")
		}
	}
	rep, err := w.clean.Verify(retain.VerifyOptions{})
	c.promise(err == nil && rep.Corrupt == 0 && rep.Missing == 0, "after the case verify says %+v, %v", rep, err)
	values()

	w.setClock(t1.Add(2 * time.Hour))
	later := w.store(w.bucket, t1.Add(2*time.Hour))
	_, err = gc.Collect(later, gc.Options{Workers: 1})
	c.promise(err == nil, "a later gc: %v", err)
	rep, err = later.Verify(retain.VerifyOptions{})
	c.promise(err == nil && rep.OK(), "after a later gc verify says %+v, %v", rep, err)
	// (An upload whose creation's answer was lost is left to the
	// collection of its run, or the server's expiry of incomplete
	// uploads: nothing names it.)
	keys := w.bucket.Keys()
	c.promise(!slices.ContainsFunc(keys, func(k string) bool {
		return strings.Contains(k, "/.retval/collecting/") || strings.HasSuffix(k, "/.retval/gc.lease")
	}), "a later gc left %v", keys)
	values()

	w.setClock(t1.Add(48 * time.Hour))
	_, err = gc.Collect(w.store(w.bucket, t1.Add(48*time.Hour)), collectIdle)
	c.promise(err == nil, "a gc of idle runs: %v", err)
	keys = w.bucket.Keys()
	c.promise(!slices.ContainsFunc(keys, func(k string) bool {
		return !strings.HasPrefix(k, matrixLoc.Prefix+"/.retval/tombstones/")
	}) && w.bucket.Uploads() == 0, "a gc of idle runs left %v (%d unfinished uploads)", keys, w.bucket.Uploads())
}
