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
// resolve, a step's lookups (an existing ledger and a new one), gc and
// verify — once for every call the operation makes and every kind of
// fault, the fault injected into that one call: a 500, a 503 SlowDown, a
// connection reset before the call, the answer dropped after the call
// took effect (with and without the client's retry), a GET's body cut
// half-way, and the call held while a competing operation runs (gc
// collecting the run; another writer; another spender of the step). After
// each case it checks the store's promises:
//
//   - a stub is printed only for a value that exists and reads back
//     exactly, then and after a later gc; otherwise the input goes out
//     verbatim, whole;
//   - reads (peek, resolve, a step's answers) are exact or an error;
//   - a step's ledger never counts fewer lookups than were answered;
//   - verify reports what a fault-free verify reports, or fails;
//   - nothing is damaged (verify finds nothing corrupt or missing), and gc
//     converges: a later gc without faults finishes what was left half
//     done (markers, a lease, debris, unfinished uploads) and leaves a
//     store verify finds clean, and a gc once every run is idle leaves
//     only tombstones.
//
// Everything is deterministic: fixed inputs, the fake's clock, each fault
// on one named call. The counts are in docs/RELIABILITY.md.
func TestS3FaultMatrix(t *testing.T) {
	base := newMatrixBase(t)
	var m matrixTally
	for _, op := range matrixOps {
		t.Run(op.name, func(t *testing.T) {
			ref := base.world()
			ref.prepare(op)
			want := op.run(ref)
			ref.faults.Wait()
			sites := sitesOf(ref.faults.Take())
			if len(sites) == 0 {
				t.Fatalf("%s made no calls", op.name)
			}
			for _, site := range sites {
				for _, kind := range matrixKinds {
					if !kind.applies(site.call) || kind.delay && op.race == nil {
						continue
					}
					m.cases++
					name := fmt.Sprintf("%s: %s on %s", op.name, kind.name, site)
					w := base.world()
					w.prepare(op)
					c := &matrixCase{t: t, m: &m, name: name, w: w, op: op}
					c.run(site, kind)
					c.checkOp(want)
					c.converge()
				}
			}
		})
	}
	for k := s3fake.KindDelay; k <= s3fake.KindTruncate; k++ {
		t.Logf("faults injected, %s: %d", k, m.injected[k])
	}
	t.Logf("%d operations run under a fault (%d where the fault's call was not reached); %d promises checked, %d broken",
		m.cases, m.unreached, m.promises, m.broken)
}

// matrixTally counts the matrix's work.
type matrixTally struct {
	mu        sync.Mutex
	cases     int
	unreached int
	promises  int
	broken    int
	seen      map[string]int // broken promises reported, by op and promise
	injected  [s3fake.KindTruncate + 1]int
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
	return b
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
func (w *world) prepare(op matrixOp) {
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
	check    func(c *matrixCase, got, want outcome)
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
			// What could not be read is reported as a problem that names
			// the failed request (a request failure is not taken for
			// intact data); every other problem is one a fault-free verify
			// reports too.
			var others []retain.Problem
			for _, p := range rep.Problems {
				if !strings.Contains(p.Message, "injected") && !strings.Contains(p.Message, io.ErrUnexpectedEOF.Error()) {
					others = append(others, p)
				}
			}
			c.promise(len(others) == len(ref.Problems) && rep.Values == ref.Values, "verify reported %s, want %s, save what names the fault", got.text, want.text)
		},
	},
}

// checkRetain: the stub of a value that reads back exactly, or the input
// verbatim, whole; never part of either.
func checkRetain(c *matrixCase, got, _ outcome) {
	switch {
	case got.err != nil:
		c.promise(len(got.out) == 0 || bytes.Equal(got.out, got.in), "a failed retain (%v) printed %d bytes, neither nothing nor its input", got.err, len(got.out))
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

func sitesOf(calls []s3fake.Call) []site {
	seen := map[string]int{}
	var out []site
	for _, c := range calls {
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

var matrixKinds = []matrixKind{
	{name: "500", fault: s3fake.InternalError(), applies: anyCall},
	{name: "503 SlowDown", fault: s3fake.SlowDown(), applies: anyCall},
	{name: "reset", fault: s3fake.Reset(), applies: anyCall},
	{name: "drop", fault: s3fake.Drop(), applies: anyCall},
	{name: "drop+retry", fault: s3fake.DropRetried(), applies: s3fake.Call.Writes},
	{name: "truncate", fault: s3fake.Truncate(), applies: func(c s3fake.Call) bool { return c.Op == s3fake.OpGet }},
	{name: "delay", delay: true, applies: anyCall},
}

// matrixCase is one operation under one fault.
type matrixCase struct {
	t       *testing.T
	m       *matrixTally
	name    string
	w       *world
	op      matrixOp
	got     outcome
	stubbed []outcome // retains that printed a stub
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

// run runs the operation with the fault on the site's call.
func (c *matrixCase) run(s site, kind matrixKind) {
	w := c.w
	match := func(call s3fake.Call) bool { return siteID(call) == s.id }
	fault := kind.fault
	if !kind.delay {
		w.faults.Add(s3fake.Rule{Match: match, Skip: s.nth, Times: 1, Fault: fault})
		c.got = c.op.run(w)
	} else {
		gate, held := make(chan struct{}), make(chan struct{})
		var once sync.Once
		fault = s3fake.Delay(gate)
		fault.Held = func(s3fake.Call) { once.Do(func() { close(held) }) }
		w.faults.Add(s3fake.Rule{Match: match, Skip: s.nth, Times: 1, Fault: fault})
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
	c.m.mu.Lock()
	n := 0
	for k := s3fake.KindDelay; k <= s3fake.KindTruncate; k++ {
		c.m.injected[k] += w.faults.Injected(k)
		n += w.faults.Injected(k)
	}
	if n == 0 {
		c.m.unreached++
	}
	c.m.mu.Unlock()
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
		for _, call := range slices.Sorted(maps.Keys(w.base.inputs)) {
			c.readsBack(matrixRun, call, w.base.inputs[call], collected, "value")
		}
		c.readsBack(matrixRun2, "other", w.base.other, collected, "value")
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

