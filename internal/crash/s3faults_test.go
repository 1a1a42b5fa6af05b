package crash

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retval/retval/internal/s3test"
)

// On object storage the analogue of a power cut is a request that fails,
// or whose outcome the client cannot know: TestS3Faults puts a proxy that
// injects one fault into one request between the real binary and a real
// server (versitygw), and checks the store's promises after each case.

// faultKinds are what the proxy does to the request it is told to.
var faultKinds = []string{
	"delay",      // held 200 ms, then carried
	"reset",      // the connection dropped before the request reached the server
	"drop-after", // carried, answered, and the answer dropped: the write happened, the client saw an error
	"500",        // InternalError, not carried
	"503",        // SlowDown, not carried
	"truncate",   // a GET's answer cut half-way through its body
	"duplicate",  // carried twice; the client sees the second answer
	"500-always", // InternalError for it and every retry of it (same method and path)
}

// fault is one kind of fault at one request (counted from 1).
type fault struct {
	kind string
	at   int
}

// faultProxy carries requests to the server, and does what its fault
// says to the at-th; it can also hold one request until released.
type faultProxy struct {
	url    string
	target string
	srv    *http.Server
	client *http.Client

	mu     sync.Mutex
	seen   []string // "METHOD path?query" of each request, in order
	f      fault
	hit    string // the request the fault met, "" while none
	always string // for 500-always: the method and path refused
	writes int    // requests that may change the bucket
	// hold, when set, keeps request number holdAt until release closes,
	// having closed held.
	holdAt        int
	held, release chan struct{}
}

func newFaultProxy(t *testing.T, target string, f fault) *faultProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{url: "http://" + ln.Addr().String(), target: target, f: f,
		client: &http.Client{Transport: &http.Transport{DisableCompression: true, Proxy: nil}}}
	p.srv = &http.Server{Handler: p, ErrorLog: log.New(io.Discard, "", 0)}
	go p.srv.Serve(ln)
	t.Cleanup(func() { p.srv.Close() })
	return p
}

// requestDesc names a request for the report: method, path below the
// bucket's, and the query's keys (uploads, partNumber, list-type, ...).
func requestDesc(r *http.Request) string {
	var keys []string
	for k := range r.URL.Query() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	path := r.URL.Path
	if _, rest, ok := strings.Cut(strings.TrimPrefix(path, "/"), "/"); ok {
		path = "…/" + rest // the bucket's name varies
	}
	if len(path) > 60 {
		path = path[:60] + "…"
	}
	d := r.Method + " " + path
	if len(keys) > 0 {
		d += "?" + strings.Join(keys, "&")
	}
	return d
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	p.mu.Lock()
	p.seen = append(p.seen, requestDesc(r))
	n := len(p.seen)
	kind := ""
	switch {
	case n == p.f.at:
		kind, p.hit = p.f.kind, requestDesc(r)
		if kind == "500-always" {
			kind, p.always = "500", r.Method+" "+r.URL.Path
		}
	case p.always != "" && p.always == r.Method+" "+r.URL.Path:
		kind = "500"
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		p.writes++
	}
	held, release := p.held, p.release
	hold := n == p.holdAt && held != nil
	p.mu.Unlock()
	if hold {
		close(held)
		<-release
	}
	switch kind {
	case "reset":
		panic(http.ErrAbortHandler)
	case "500", "503":
		code, status := "InternalError", http.StatusInternalServerError
		if kind == "503" {
			code, status = "SlowDown", http.StatusServiceUnavailable
		}
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(status)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>injected</Message></Error>`, code)
		return
	case "delay":
		time.Sleep(200 * time.Millisecond)
	}
	resp, err := p.forward(r, body)
	if err == nil && kind == "duplicate" {
		resp, err = p.forward(r, body)
	}
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if kind == "drop-after" {
		panic(http.ErrAbortHandler)
	}
	for k, vs := range resp.header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.status)
	if kind == "truncate" && len(resp.body) > 1 {
		w.Write(resp.body[:len(resp.body)/2])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
	w.Write(resp.body)
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

// forward carries the request to the server as it came, Host header and
// all (it is signed), and reads the whole answer.
func (p *faultProxy) forward(r *http.Request, body []byte) (*answer, error) {
	out, err := http.NewRequestWithContext(context.WithoutCancel(r.Context()), r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	out.Header = r.Header.Clone()
	out.Host = r.Host
	out.ContentLength = int64(len(body))
	resp, err := p.client.Do(out)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &answer{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// met is the request the fault met, "" when none did.
func (p *faultProxy) met() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hit
}

// writeCount is how many requests may have changed the bucket.
func (p *faultProxy) writeCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.writes
}

// holdRequest makes the proxy hold its at-th request: held closes when it
// is held; the request goes on once release is closed.
func (p *faultProxy) holdRequest(at int) (held, release chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holdAt, p.held, p.release = at, make(chan struct{}), make(chan struct{})
	return p.held, p.release
}

func (p *faultProxy) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

// s3ctx is one case's store: a prefix of its own in the bucket, reached
// directly (setup and checks) or through the proxy (the workload).
type s3ctx struct {
	srv            *s3test.Server
	bucket, prefix string
	dir            string // for inputs, outside the store
	proxy          *faultProxy
}

func (c *s3ctx) env(viaProxy bool) []string {
	env := append(os.Environ(), c.srv.Env()...)
	env = append(env, "RETVAL_STORE=s3://"+c.bucket+"/"+c.prefix, "AWS_PROFILE=", "AWS_SESSION_TOKEN=", "AWS_ENDPOINT_URL=")
	if viaProxy {
		env = append(env, "AWS_ENDPOINT_URL_S3="+c.proxy.url)
	}
	return env
}

// retval runs the binary with stdin, directly or through the proxy.
func (c *s3ctx) retval(viaProxy bool, stdin []byte, args ...string) (stdout, stderr []byte, err error) {
	cmd := exec.Command(retval, args...)
	cmd.Env = c.env(viaProxy)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.Bytes(), e.Bytes(), err
}

// s3workload is a workload of TestS3Faults: run makes its requests
// through the proxy and returns what it printed.
type s3workload struct {
	name     string
	setup    func(t *testing.T, c *s3ctx) []value
	run      func(t *testing.T, c *s3ctx) []byte
	promised func() []value
	stub     func(stdout []byte) ([]byte, error)
	replay   []string
	verbatim func() []byte // when set: without a stub, the command prints this
	want     func() []byte // when set: the stub the command must print, if any
	step     string
	noWrites bool
}

func s3Workloads() []s3workload {
	retainW := func(name string, n int) s3workload {
		var data []byte
		return s3workload{
			name: name, replay: retainFlags,
			setup: func(t *testing.T, c *s3ctx) []value { data = random(n); return nil },
			run: func(t *testing.T, c *s3ctx) []byte {
				out, _, _ := c.retval(true, data, append([]string{"retain", "--run", "r", "--call", "v"}, retainFlags...)...)
				return out
			},
			promised: func() []value { return []value{stubbed("v", data)} },
			verbatim: func() []byte { return data },
		}
	}
	var execData, hookData, replayData, replayStub []byte
	var home string
	ws := []s3workload{
		retainW("retain-small", 300),
		retainW("retain-9MiB-multipart", 9<<20),
		{
			name: "exec-1MiB", replay: append([]string{"--read-more", "shell"}, retainFlags...),
			setup: func(t *testing.T, c *s3ctx) []value {
				execData = random(1 << 20)
				writeInput(t, c.dir, execData)
				return nil
			},
			run: func(t *testing.T, c *s3ctx) []byte {
				out, _, _ := c.retval(true, nil, "exec", "--run", "r", "--call", "v", "--threshold", "0", "--", "cat", filepath.Join(c.dir, "in"))
				return out
			},
			promised: func() []value { return []value{stubbed("v", execData)} },
			verbatim: func() []byte { return execData },
		},
		{
			name: "hook-claude-code", replay: []string{"--read-more", "shell"},
			setup: func(t *testing.T, c *s3ctx) []value {
				hookData = random(200 << 10)
				home = filepath.Join(c.dir, "home")
				os.Mkdir(home, 0o700)
				return nil
			},
			run: func(t *testing.T, c *s3ctx) []byte {
				in, _ := json.Marshal(map[string]any{
					"session_id": "r", "transcript_path": "/nonexistent.jsonl", "cwd": c.dir,
					"hook_event_name": "PostToolUse", "tool_use_id": "v", "tool_name": "Bash",
					"tool_input":    map[string]any{"command": "cat big"},
					"tool_response": map[string]any{"stdout": string(hookData), "stderr": "", "interrupted": false, "isImage": false},
				})
				cmd := exec.Command(retval, "hook", "claude-code")
				cmd.Env = append(c.env(true), "HOME="+home, "XDG_STATE_HOME=", "XDG_CONFIG_HOME=")
				cmd.Stdin = bytes.NewReader(in)
				out, _ := cmd.Output()
				return out
			},
			promised: func() []value { return []value{stubbed("v", hookData)} },
			stub:     hookWorkload().stub,
		},
		{
			name: "resolve-step", step: "s",
			setup: func(t *testing.T, c *s3ctx) []value {
				if out, stderr, err := c.retval(false, random(2000), append([]string{"retain", "--run", "r", "--call", "v"}, retainFlags...)...); err != nil {
					t.Fatalf("retain: %v: %s%s", err, out, stderr)
				}
				return nil
			},
			run: func(t *testing.T, c *s3ctx) []byte {
				var all []byte
				for range 10 {
					out, _, _ := c.retval(true, nil, "resolve", "--run", "r", "v", "--lines", "1-1", "--step", "s")
					all = append(all, out...)
				}
				return all
			},
			promised: func() []value { return nil },
		},
		{
			name: "gc-idle-runs",
			setup: func(t *testing.T, c *s3ctx) []value {
				vs := s3IdleRuns(t, c, "old0", "old1", "old2")
				for i := range vs {
					vs[i].marker, vs[i].collected = "removed 3 runs", true
				}
				return vs
			},
			run: func(t *testing.T, c *s3ctx) []byte {
				out, _, _ := c.retval(true, nil, "gc", "--max-age", "1ns", "--grace", "0s")
				return out
			},
			promised: func() []value { return nil },
		},
		{
			name: "replay", replay: retainFlags, noWrites: true,
			setup: func(t *testing.T, c *s3ctx) []value {
				replayData = random(5000)
				var stderr []byte
				var err error
				if replayStub, stderr, err = c.retval(false, replayData, append([]string{"retain", "--run", "r", "--call", "v"}, retainFlags...)...); err != nil {
					t.Fatalf("retain: %v: %s", err, stderr)
				}
				return nil
			},
			run: func(t *testing.T, c *s3ctx) []byte {
				out, _, _ := c.retval(true, replayData, append([]string{"replay", "--run", "r", "--call", "v"}, retainFlags...)...)
				return out
			},
			promised: func() []value { return []value{stubbed("v", replayData)} },
			verbatim: func() []byte { return replayData },
			want:     func() []byte { return replayStub },
		},
	}
	return ws
}

// s3IdleRuns makes runs holding one value v each, directly.
func s3IdleRuns(t *testing.T, c *s3ctx, names ...string) []value {
	t.Helper()
	var vs []value
	for i, r := range names {
		d := random(3000 + i)
		if out, stderr, err := c.retval(false, d, append([]string{"retain", "--run", r, "--call", "v"}, retainFlags...)...); err != nil {
			t.Fatalf("retain: %v: %s%s", err, out, stderr)
		}
		vs = append(vs, value{run: r, id: "v", data: d})
	}
	return vs
}

// s3report counts what the cases of one workload found.
type s3report struct {
	requests            int // of the fault-free run
	cases, hits         int // cases run; of them, cases whose fault met a request
	possible            int // cases there are: every kind at every request it applies to
	stubs, fallbacks    int // cases that printed the stub, or the input unchanged (or nothing, for the hook)
	losses, damage      []string
	kinds               map[string]int // cases run per kind
	converged, verified int
	leaseLeft           int // cases after which gc's lease stays until it expires
}

// TestS3Faults runs each workload through the fault proxy to versitygw:
// once without a fault (its requests listed), then once per case — one
// fault kind at one request, chosen by rule, never by time — each in a
// store of its own. The CI size runs every kind once per workload at a
// request drawn with -crash.seed; -crash.long runs every kind at every
// request. After each case, directly to the server: a stub printed means
// the value reads back exactly (resolve) and replay rebuilds that stub;
// without a stub, retain and exec printed the input unchanged; a step's
// ledger counts every lookup answered; a run gc reported removed says
// collected (and still does once the run is written again), one it did
// not is whole or collected; verify finds nothing corrupt or missing; gc
// --grace 0s then verify is clean. Replay makes no write through the
// proxy. gc racing a retain: TestS3GCRace.
func TestS3Faults(t *testing.T) {
	srv := s3test.Shared(t)
	bucket := srv.NewBucket(t)
	for _, w := range s3Workloads() {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(*seed, 0))
			rep := s3report{kinds: map[string]int{}}
			newCtx := func(tag string, f fault) *s3ctx {
				c := &s3ctx{srv: srv, bucket: bucket, prefix: w.name + "-" + tag, dir: t.TempDir()}
				c.proxy = newFaultProxy(t, srv.Endpoint, f)
				return c
			}
			ref := newCtx("ref", fault{})
			s3Case(t, &rep, w, ref)
			reqs := ref.proxy.requests()
			rep.requests = len(reqs)
			var cases []fault
			for _, kind := range faultKinds {
				var at []int
				for i, r := range reqs {
					if kind != "truncate" || strings.HasPrefix(r, "GET ") {
						at = append(at, i+1)
					}
				}
				rep.possible += len(at)
				if !*long && len(at) > 0 {
					at = []int{at[rng.IntN(len(at))]}
				}
				for _, i := range at {
					cases = append(cases, fault{kind, i})
				}
			}
			for n, f := range cases {
				c := newCtx(fmt.Sprint(n), f)
				s3Case(t, &rep, w, c)
				rep.cases++
				rep.kinds[f.kind]++
				if c.proxy.met() != "" {
					rep.hits++
				}
				t.Logf("%s at request %d (%s)", f.kind, f.at, c.proxy.met())
			}
			line := rep.line(w.name)
			t.Log(line)
			fmt.Println(line)
			for _, l := range append(rep.losses, rep.damage...) {
				t.Error(l)
			}
		})
	}
}

func (r *s3report) line(name string) string {
	var kinds []string
	for _, k := range faultKinds {
		kinds = append(kinds, fmt.Sprintf("%s×%d", k, r.kinds[k]))
	}
	return fmt.Sprintf("s3 %s: %d requests fault-free; %d cases of %d (%s), %d met a request; %d printed the stub, %d the input; %d losses, %d damaged; gc then verify clean %d of %d (%d: gc's lease left to expire, its release refused)",
		name, r.requests, r.cases, r.possible, strings.Join(kinds, " "), r.hits, r.stubs, r.fallbacks, len(r.losses), len(r.damage), r.verified, r.converged, r.leaseLeft)
}

// s3Case sets up a store, runs the workload through c's proxy and checks
// the store directly.
func s3Case(t *testing.T, rep *s3report, w s3workload, c *s3ctx) {
	t.Helper()
	before := w.setup(t, c)
	stdout := w.run(t, c)
	where := fmt.Sprintf("%s/%s (%s at request %d: %s)", w.name, c.prefix, c.proxy.f.kind, c.proxy.f.at, c.proxy.met())
	loss := func(format string, a ...any) {
		rep.losses = append(rep.losses, fmt.Sprintf(format, a...)+"; "+where)
	}
	damage := func(format string, a ...any) {
		rep.damage = append(rep.damage, fmt.Sprintf(format, a...)+"; "+where)
	}
	if w.noWrites && c.proxy.writeCount() > 0 {
		loss("%d write requests (%v)", c.proxy.writeCount(), c.proxy.requests())
	}
	var stub []byte
	promised := w.promised()
	if len(promised) > 0 {
		stub = stdout
		if w.stub != nil && len(stdout) > 0 {
			var err error
			if stub, err = w.stub(stdout); err != nil {
				loss("%v: %.200q", err, stdout)
			}
		}
		switch {
		case w.want != nil && bytes.HasPrefix(stub, []byte("[retained #")) && !bytes.Equal(stub, w.want()):
			loss("printed another stub than retain did: %.120q", stub)
		case bytes.HasPrefix(stub, []byte("[retained #")):
			rep.stubs++
		case w.verbatim != nil && bytes.Equal(stdout, w.verbatim()):
			rep.fallbacks++
		case w.verbatim == nil && len(stdout) == 0:
			rep.fallbacks++ // the hook: nothing, so that the agent shows its own output
		default:
			loss("printed neither the stub nor the input: %.120q", stdout)
		}
	}
	resolve := func(v value) ([]byte, string) {
		b, stderr, err := c.retval(false, nil, "resolve", "--run", v.run, v.id, "--max-lookup-bytes", "0", "--max-step-bytes", "0")
		if err == nil {
			return b, ""
		}
		line, _, _ := strings.Cut(string(stderr), "\n")
		if m := errCode.FindStringSubmatch(line); m != nil {
			return b, m[1]
		}
		return b, fmt.Sprintf("%v: %.200s", err, line)
	}
	values := append(before, promised...)
	for _, v := range values {
		shown := v.marker == "" || bytes.Contains(stdout, []byte(v.marker))
		if v.replay {
			// The stub printed, or, where the command fell back to the
			// input, the one retain printed (replay) or any stub of
			// the value: a write whose answer was lost may have made it.
			b, _, err := c.retval(false, v.data, append([]string{"replay", "--run", v.run, "--call", v.id}, w.replay...)...)
			want := stub
			if !shown && w.want != nil {
				want = w.want()
			}
			switch {
			case err != nil:
				loss("%s/%s: replay failed: %v", v.run, v.id, err)
			case bytes.Equal(b, want):
			case shown:
				loss("%s/%s printed, then replay printed %.80q", v.run, v.id, b)
			case w.want == nil && bytes.HasPrefix(b, []byte(v.marker)):
			case !bytes.Equal(b, v.data):
				loss("%s/%s: replay printed neither the stub nor the input: %.80q", v.run, v.id, b)
			}
		}
		b, code := resolve(v)
		whole := code == "" && bytes.Equal(b, v.data)
		switch {
		case v.collected && shown && code != "collected":
			loss("%s/%s collected and reported, then resolve %q with %d bytes", v.run, v.id, code, len(b))
		case v.collected && !whole && code != "collected":
			loss("%s/%s neither whole nor collected: %q, %d of %d bytes", v.run, v.id, code, len(b), len(v.data))
		case !v.collected && shown && !whole:
			loss("%s/%s printed, then resolve %q with %d of %d bytes", v.run, v.id, code, len(b), len(v.data))
		}
	}
	for _, v := range values {
		if !v.collected {
			continue
		}
		if out, stderr, err := c.retval(false, []byte("written again\n"), append([]string{"retain", "--run", v.run, "--call", "again"}, retainFlags...)...); err != nil {
			damage("retain into %s again: %v: %s%s", v.run, err, out, stderr)
			continue
		}
		b, code := resolve(v)
		if bytes.Contains(stdout, []byte(v.marker)) && code != "collected" {
			loss("%s/%s collected and reported, then, the run written again, resolve %q with %d bytes", v.run, v.id, code, len(b))
		}
	}
	if w.step != "" {
		answered := bytes.Count(stdout, []byte("\n"))
		var lookups int64
		if g, err := c.srv.Client(c.bucket).GetObject(context.Background(), c.prefix+"/r.values/.steps/"+w.step+".json", nil); err == nil {
			var l struct{ Lookups int64 }
			json.NewDecoder(g.Body).Decode(&l)
			g.Body.Close()
			lookups = l.Lookups
		}
		if lookups < int64(answered) {
			loss("ledger counts %d lookups, %d were answered", lookups, answered)
		}
	}
	s3Converge(rep, c, damage)
}

// s3Converge checks that verify finds nothing damaged, and that gc
// --grace 0s then verify is clean.
func s3Converge(rep *s3report, c *s3ctx, damage func(string, ...any)) {
	verify := func() (verifyReport, []byte, error) {
		out, _, _ := c.retval(false, nil, "verify", "--grace", "0s", "--json")
		var vr verifyReport
		line, _, _ := bytes.Cut(out, []byte("\n"))
		if err := json.Unmarshal(line, &vr); err != nil {
			return vr, out, fmt.Errorf("verify printed no report: %.300s", out)
		}
		return vr, out, nil
	}
	if vr, out, err := verify(); err != nil || vr.Corrupt+vr.Missing > 0 {
		damage("verify: %v %.300s", err, out)
	}
	rep.converged++
	if out, stderr, err := c.retval(false, nil, "gc", "--grace", "0s"); err != nil {
		if c.proxy.f.kind == "500-always" && strings.HasPrefix(c.proxy.met(), "DELETE ") && strings.HasSuffix(c.proxy.met(), "/gc.lease?x-id") &&
			bytes.HasSuffix(bytes.TrimSpace(stderr), []byte("(busy)")) {
			// The server refused every attempt to release gc's lease: it
			// keeps gc out until it expires (LeaseTTL), as after a gc
			// killed while holding it.
			rep.leaseLeft++
			return
		}
		damage("gc --grace 0s: %v: %s%s", err, out, stderr)
		return
	}
	if vr, out, err := verify(); err != nil || vr.Corrupt+vr.Missing+vr.Debris > 0 {
		damage("after gc, verify: %v %.300s", err, out)
		return
	}
	rep.verified++
}

// TestS3GCRace is gc racing a retain on object storage, in a fixed
// interleaving: gc's requests go through one proxy, which holds its k-th
// request while a retain into the run gc collects runs, through another,
// from start to end; then gc goes on. It is run for every k (the CI size:
// four k drawn with -crash.seed). Checks: the retain's stub, if it printed
// one, reads back exactly, also after gc finished; gc's report that it
// removed the run means its old value says collected; the store
// converges as in TestS3Faults.
func TestS3GCRace(t *testing.T) {
	srv := s3test.Shared(t)
	bucket := srv.NewBucket(t)
	rng := rand.New(rand.NewPCG(*seed, 0))
	rep := s3report{kinds: map[string]int{}}
	newCtx := func(tag string) (*s3ctx, *s3ctx) {
		gcSide := &s3ctx{srv: srv, bucket: bucket, prefix: "race-" + tag, dir: t.TempDir()}
		gcSide.proxy = newFaultProxy(t, srv.Endpoint, fault{})
		retainSide := *gcSide
		retainSide.proxy = newFaultProxy(t, srv.Endpoint, fault{})
		return gcSide, &retainSide
	}
	// The fault-free run lists gc's requests.
	ref, _ := newCtx("ref")
	s3IdleRuns(t, ref, "r")
	if out, stderr, err := ref.retval(true, nil, "gc", "--max-age", "1ns", "--grace", "0s"); err != nil {
		t.Fatalf("gc: %v: %s%s", err, out, stderr)
	}
	n := len(ref.proxy.requests())
	rep.requests, rep.possible = n, n
	ks := make([]int, n)
	for i := range ks {
		ks[i] = i + 1
	}
	if !*long {
		rng.Shuffle(len(ks), func(i, j int) { ks[i], ks[j] = ks[j], ks[i] })
		ks = ks[:min(4, len(ks))]
		sort.Ints(ks)
	}
	for _, k := range ks {
		gcSide, retainSide := newCtx(fmt.Sprint(k))
		before := s3IdleRuns(t, gcSide, "r")
		before[0].marker, before[0].collected = "removed 1 run", true
		held, release := gcSide.proxy.holdRequest(k)
		gc := exec.Command(retval, "gc", "--max-age", "1ns", "--grace", "0s")
		gc.Env = gcSide.env(true)
		var gcOut bytes.Buffer
		gc.Stdout = &gcOut
		if err := gc.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- gc.Wait() }()
		heldAt := ""
		select {
		case <-held:
			heldAt = gcSide.proxy.requests()[k-1]
		case <-exited: // gc made fewer requests this time
			exited <- nil
		}
		data := random(4000)
		out, _, _ := retainSide.retval(true, data, append([]string{"retain", "--run", "r", "--call", "v2"}, retainFlags...)...)
		close(release)
		<-exited
		rep.cases++
		if heldAt != "" {
			rep.hits++
		}
		where := fmt.Sprintf("gc held at request %d (%s)", k, heldAt)
		v2 := stubbed("v2", data)
		stdout := append(gcOut.Bytes(), out...)
		switch {
		case bytes.HasPrefix(out, []byte("[retained #v2]")):
			rep.stubs++
		case bytes.Equal(out, data):
			rep.fallbacks++
		default:
			rep.losses = append(rep.losses, fmt.Sprintf("retain printed neither the stub nor the input: %.120q; %s", out, where))
		}
		for _, v := range append(before, v2) {
			shown := bytes.Contains(stdout, []byte(v.marker))
			b, stderr, err := gcSide.retval(false, nil, "resolve", "--run", v.run, v.id, "--max-lookup-bytes", "0", "--max-step-bytes", "0")
			line, _, _ := strings.Cut(string(stderr), "\n")
			code := ""
			if m := errCode.FindStringSubmatch(line); err != nil && m != nil {
				code = m[1]
			} else if err != nil {
				code = err.Error()
			}
			whole := err == nil && bytes.Equal(b, v.data)
			switch {
			case v.collected && shown && code != "collected":
				rep.losses = append(rep.losses, fmt.Sprintf("%s/%s collected and reported, then resolve %q; %s", v.run, v.id, code, where))
			case v.collected && !whole && code != "collected":
				rep.losses = append(rep.losses, fmt.Sprintf("%s/%s neither whole nor collected: %q; %s", v.run, v.id, code, where))
			case !v.collected && shown && !whole && code == "collected":
				// Taken by gc: rightly, if its plan had the value (it
				// was committed before gc listed the run), which its
				// record of the ids it took says once the run is
				// written again.
				gcSide.retval(false, []byte("written again\n"), append([]string{"retain", "--run", v.run, "--call", "again"}, retainFlags...)...)
				_, stderr, _ := gcSide.retval(false, nil, "resolve", "--run", v.run, v.id)
				line, _, _ := strings.Cut(string(stderr), "\n")
				if m := errCode.FindStringSubmatch(line); m == nil || m[1] != "collected" {
					rep.losses = append(rep.losses, fmt.Sprintf("%s/%s printed, then gc took it without knowing: once the run is written again, resolve says %q; %s", v.run, v.id, line, where))
				}
			case !v.collected && shown && !whole:
				rep.losses = append(rep.losses, fmt.Sprintf("%s/%s printed, then resolve %q with %d of %d bytes; %s", v.run, v.id, code, len(b), len(v.data), where))
			}
		}
		s3Converge(&rep, gcSide, func(format string, a ...any) {
			rep.damage = append(rep.damage, fmt.Sprintf(format, a...)+"; "+where)
		})
		t.Logf("%s: gc printed %q, retain %.60q", where, gcOut.String(), out)
	}
	line := rep.line("gc-racing-retain")
	t.Log(line)
	fmt.Println(line)
	for _, l := range append(rep.losses, rep.damage...) {
		t.Error(l)
	}
}
