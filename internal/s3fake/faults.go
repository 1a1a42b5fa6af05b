package s3fake

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/retval/retval/pkg/retain/s3store"
)

// Op names a call of s3store.API.
type Op string

// The calls, by their S3 names.
const (
	OpPut            Op = "PutObject"
	OpGet            Op = "GetObject"
	OpHead           Op = "HeadObject"
	OpList           Op = "ListObjects"
	OpDelete         Op = "DeleteObject"
	OpDeleteObjects  Op = "DeleteObjects"
	OpNow            Op = "HeadBucket"
	OpCreateUpload   Op = "CreateMultipartUpload"
	OpUploadPart     Op = "UploadPart"
	OpCompleteUpload Op = "CompleteMultipartUpload"
	OpAbortUpload    Op = "AbortMultipartUpload"
	OpListUploads    Op = "ListMultipartUploads"
)

// Call is one call through a Faults wrapper, as its rules see it.
type Call struct {
	Op    Op
	Key   string   // the key; a listing's prefix; "" for HeadBucket
	Keys  []string // a batch delete's keys (Key is the first)
	Cond  s3store.Cond
	Range *s3store.Range // a ranged GET's
	Part  int32          // an UploadPart's number
	Seq   int            // the call's number through the wrapper, from 1
}

// Writes reports whether the call may change the bucket.
func (c Call) Writes() bool {
	switch c.Op {
	case OpPut, OpDelete, OpDeleteObjects, OpCreateUpload, OpUploadPart, OpCompleteUpload, OpAbortUpload:
		return true
	}
	return false
}

func (c Call) String() string {
	s := string(c.Op) + " " + c.Key
	if c.Range != nil {
		s += " " + c.Range.Header()
	}
	if c.Part != 0 {
		s += fmt.Sprintf(" part %d", c.Part)
	}
	if c.Cond.IfNoneMatch {
		s += " If-None-Match"
	}
	if c.Cond.IfMatch != "" {
		s += " If-Match"
	}
	return s
}

// Kind is a kind of fault.
type Kind int

// The kinds of fault.
const (
	// KindDelay holds the call until the fault's Gate is closed (or the
	// call's context ends), then sends it: a test decides the order of
	// events, never a clock.
	KindDelay Kind = iota
	// KindFail answers with an error status (500, 503 SlowDown, ...)
	// without the call reaching the bucket.
	KindFail
	// KindDrop sends the call and loses the answer: the call took
	// effect, and the caller sees a connection error (the ambiguous
	// case). With Retry, the caller's client sends the call once more,
	// as the AWS SDK does after a connection error, and the caller sees
	// that answer (a conditional write's own 412, say).
	KindDrop
	// KindReset resets the connection before the call reaches the
	// bucket: nothing happened, and the caller sees a connection error.
	KindReset
	// KindTruncate answers a GET with a body cut half-way, ending in
	// io.ErrUnexpectedEOF, unwrapped, as Go's HTTP client reports a body
	// shorter than its Content-Length. A GET of nothing, or a call that
	// is not a GET, is not touched.
	KindTruncate
	// KindHook runs the fault's Before before the call is sent and After
	// once it is answered: a test's own look at the calls.
	KindHook
	numKinds
)

var kindNames = [numKinds]string{"delay", "fail", "drop", "reset", "truncate", "hook"}

func (k Kind) String() string {
	if k >= 0 && k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Fault is what a rule does to a call it selects.
type Fault struct {
	Kind Kind
	// Gate: KindDelay sends the call once Gate is closed; Held, when set,
	// is told of the call first, once it is held.
	Gate <-chan struct{}
	Held func(Call)
	// Status and Code: KindFail's answer.
	Status int
	Code   string
	// Retry: KindDrop's client sends the call again.
	Retry bool
	// Before and After: KindHook's.
	Before func(Call)
	After  func(Call, error)
}

// Delay holds a call until gate is closed.
func Delay(gate <-chan struct{}) Fault { return Fault{Kind: KindDelay, Gate: gate} }

// Fail answers a call with status and code, S3's error code.
func Fail(status int, code string) Fault { return Fault{Kind: KindFail, Status: status, Code: code} }

// InternalError is 500 InternalError.
func InternalError() Fault { return Fail(http.StatusInternalServerError, "InternalError") }

// SlowDown is 503 SlowDown, S3's throttling.
func SlowDown() Fault { return Fail(http.StatusServiceUnavailable, "SlowDown") }

// Drop loses the answer of a call that took effect.
func Drop() Fault { return Fault{Kind: KindDrop} }

// DropRetried loses the answer of a call that took effect, and sends the
// call again, whose answer the caller gets.
func DropRetried() Fault { return Fault{Kind: KindDrop, Retry: true} }

// Reset resets the connection before the call is sent.
func Reset() Fault { return Fault{Kind: KindReset} }

// Truncate cuts a GET's body half-way.
func Truncate() Fault { return Fault{Kind: KindTruncate} }

// Hook runs before (when not nil) before the call is sent, and after
// (when not nil) once it is answered.
func Hook(before func(Call), after func(Call, error)) Fault {
	return Fault{Kind: KindHook, Before: before, After: after}
}

// Rule selects calls and injects a fault into them.
type Rule struct {
	// Match selects the calls the rule counts (nil: every call).
	Match func(Call) bool
	// Skip is how many selected calls pass untouched before the fault.
	Skip int
	// Times is how many selected calls, after Skip, get the fault; 0 is
	// every one.
	Times int
	Fault Fault
}

type rule struct {
	Rule
	seen int // calls selected so far
}

// Faults wraps an s3store.API and injects faults into its calls by rule,
// in the manner of restic's backend wrappers: the wrapped API may be a
// Bucket or the HTTP client. It records every call. It is safe for
// concurrent use, and rules may be added while calls are in flight.
type Faults struct {
	api s3store.API

	mu       sync.Mutex
	idle     sync.Cond // signalled when inFlight drops to 0
	rules    []*rule
	seq      int
	calls    []Call
	injected [numKinds]int
	inFlight int
}

// Wrap returns api with no rules yet: every call passes, and is recorded.
func Wrap(api s3store.API) *Faults {
	f := &Faults{api: api}
	f.idle.L = &f.mu
	return f
}

// Wait returns once no call is in flight through the wrapper (one may
// start right after): what a test waits for before it looks, when the
// code under test may still have calls going on goroutines of its own
// (reads fetched ahead).
func (f *Faults) Wait() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.inFlight > 0 {
		f.idle.Wait()
	}
}

// done marks a call that decide let in as over.
func (f *Faults) done() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.inFlight--; f.inFlight == 0 {
		f.idle.Broadcast()
	}
}

var _ s3store.API = (*Faults)(nil)

// Inner is the wrapped API.
func (f *Faults) Inner() s3store.API { return f.api }

// Add adds a rule, after those already there (the first rule that selects
// a call and has a fault left decides it), and returns a function that
// removes it.
func (f *Faults) Add(r Rule) (remove func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rr := &rule{Rule: r}
	f.rules = append(f.rules, rr)
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		for i, x := range f.rules {
			if x == rr {
				f.rules = append(f.rules[:i:i], f.rules[i+1:]...)
				return
			}
		}
	}
}

// On adds a rule that injects fault into every call match selects.
func (f *Faults) On(match func(Call) bool, fault Fault) (remove func()) {
	return f.Add(Rule{Match: match, Fault: fault})
}

// Clear removes every rule.
func (f *Faults) Clear() {
	f.mu.Lock()
	f.rules = nil
	f.mu.Unlock()
}

// Calls returns the calls recorded since the last Take.
func (f *Faults) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Call(nil), f.calls...)
}

// Take returns the calls recorded since the last Take, and forgets them.
func (f *Faults) Take() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.calls
	f.calls = nil
	return out
}

// Injected is how many faults of kind k were injected (a KindTruncate
// counts only where it cut a body).
func (f *Faults) Injected(k Kind) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.injected[k]
}

// decide records c and returns the fault the rules give it, if any.
func (f *Faults) decide(c *Call) (Fault, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	f.inFlight++
	c.Seq = f.seq
	f.calls = append(f.calls, *c)
	for _, r := range f.rules {
		if r.Match != nil && !r.Match(*c) || r.Fault.Kind == KindTruncate && c.Op != OpGet {
			continue
		}
		if r.Times > 0 && r.seen >= r.Skip+r.Times {
			continue
		}
		r.seen++
		if r.seen <= r.Skip {
			continue
		}
		if r.Fault.Kind != KindTruncate { // counted where it cuts a body
			f.injected[r.Fault.Kind]++
		}
		return r.Fault, true
	}
	return Fault{}, false
}

// errConnReset is what a client sees of a connection the server's side
// reset: as net/http reports it.
func errConnReset() error {
	return &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
}

// ErrInjected is wrapped by every error a fault made up (not one the
// wrapped API answered), but a cut body's, which is io.ErrUnexpectedEOF
// as a real client's is: a test can tell them apart.
var ErrInjected = errors.New("injected fault")

type injectedErr struct {
	kind Kind
	call Call
	err  error
}

func (e *injectedErr) Error() string {
	return fmt.Sprintf("%v (injected %s of %s)", e.err, e.kind, e.call)
}

func (e *injectedErr) Unwrap() []error { return []error{e.err, ErrInjected} }

// do runs one call through the rules: send sends it to the wrapped API
// and reports its error.
func (f *Faults) do(ctx context.Context, c Call, send func() error) error {
	fault, ok := f.decide(&c)
	defer f.done()
	if !ok {
		return send()
	}
	return apply(ctx, c, fault, send)
}

// apply injects fault into call c.
func apply(ctx context.Context, c Call, fault Fault, send func() error) error {
	switch fault.Kind {
	case KindDelay:
		if fault.Held != nil {
			fault.Held(c)
		}
		select {
		case <-fault.Gate:
		case <-ctx.Done():
			return ctx.Err()
		}
		return send()
	case KindFail:
		return &injectedErr{kind: KindFail, call: c, err: &s3store.StatusError{Status: fault.Status, Code: fault.Code, Message: "injected"}}
	case KindReset:
		return &injectedErr{kind: KindReset, call: c, err: errConnReset()}
	case KindDrop:
		if err := send(); err != nil {
			return err // the answer was an error anyway
		}
		if fault.Retry {
			return send()
		}
		return &injectedErr{kind: KindDrop, call: c, err: errConnReset()}
	case KindHook:
		if fault.Before != nil {
			fault.Before(c)
		}
		err := send()
		if fault.After != nil {
			fault.After(c, err)
		}
		return err
	}
	return send() // KindTruncate: the GET does it
}

func (f *Faults) PutObject(ctx context.Context, key string, body []byte, cond s3store.Cond) (etag string, err error) {
	err = f.do(ctx, Call{Op: OpPut, Key: key, Cond: cond}, func() (err error) {
		etag, err = f.api.PutObject(ctx, key, body, cond)
		return err
	})
	return etag, err
}

func (f *Faults) GetObject(ctx context.Context, key string, rng *s3store.Range) (*s3store.GetOutput, error) {
	c := Call{Op: OpGet, Key: key, Range: rng}
	fault, ok := f.decide(&c)
	defer f.done()
	if ok && fault.Kind == KindTruncate {
		out, err := f.api.GetObject(ctx, key, rng)
		if err != nil || out.Size == 0 {
			return out, err
		}
		f.mu.Lock()
		f.injected[KindTruncate]++
		f.mu.Unlock()
		out.Body = &truncated{ReadCloser: out.Body, left: out.Size / 2}
		return out, nil
	}
	var out *s3store.GetOutput
	send := func() (err error) {
		if out != nil {
			out.Body.Close() // an answer dropped: the retry's is read
		}
		out, err = f.api.GetObject(ctx, key, rng)
		return err
	}
	var err error
	if ok {
		err = apply(ctx, c, fault, send)
	} else {
		err = send()
	}
	if err != nil {
		if out != nil {
			out.Body.Close()
		}
		return nil, err
	}
	return out, nil
}

// truncated is a body that ends with io.ErrUnexpectedEOF after left bytes.
type truncated struct {
	io.ReadCloser
	left int64
}

func (t *truncated) Read(p []byte) (int, error) {
	if t.left <= 0 {
		// Exactly what net/http's client returns for a body shorter
		// than its Content-Length.
		return 0, io.ErrUnexpectedEOF
	}
	if int64(len(p)) > t.left {
		p = p[:t.left]
	}
	n, err := t.ReadCloser.Read(p)
	t.left -= int64(n)
	return n, err
}

func (f *Faults) HeadObject(ctx context.Context, key string) (o s3store.Object, err error) {
	err = f.do(ctx, Call{Op: OpHead, Key: key}, func() (err error) {
		o, err = f.api.HeadObject(ctx, key)
		return err
	})
	return o, err
}

func (f *Faults) ListObjects(ctx context.Context, in s3store.ListInput) (page *s3store.ListPage, err error) {
	err = f.do(ctx, Call{Op: OpList, Key: in.Prefix}, func() (err error) {
		page, err = f.api.ListObjects(ctx, in)
		return err
	})
	return page, err
}

func (f *Faults) DeleteObject(ctx context.Context, key string, cond s3store.Cond) error {
	return f.do(ctx, Call{Op: OpDelete, Key: key, Cond: cond}, func() error {
		return f.api.DeleteObject(ctx, key, cond)
	})
}

func (f *Faults) DeleteObjects(ctx context.Context, keys []string) (failed []s3store.DeleteError, err error) {
	c := Call{Op: OpDeleteObjects, Keys: keys}
	if len(keys) > 0 {
		c.Key = keys[0]
	}
	err = f.do(ctx, c, func() (err error) {
		failed, err = f.api.DeleteObjects(ctx, keys)
		return err
	})
	return failed, err
}

func (f *Faults) Now(ctx context.Context) (t time.Time, err error) {
	err = f.do(ctx, Call{Op: OpNow}, func() (err error) {
		t, err = f.api.Now(ctx)
		return err
	})
	return t, err
}

func (f *Faults) CreateUpload(ctx context.Context, key string) (id string, err error) {
	err = f.do(ctx, Call{Op: OpCreateUpload, Key: key}, func() (err error) {
		id, err = f.api.CreateUpload(ctx, key)
		return err
	})
	return id, err
}

func (f *Faults) UploadPart(ctx context.Context, key, id string, num int32, body []byte) (p s3store.Part, err error) {
	err = f.do(ctx, Call{Op: OpUploadPart, Key: key, Part: num}, func() (err error) {
		p, err = f.api.UploadPart(ctx, key, id, num, body)
		return err
	})
	return p, err
}

func (f *Faults) CompleteUpload(ctx context.Context, key, id string, parts []s3store.Part, cond s3store.Cond) (etag string, err error) {
	err = f.do(ctx, Call{Op: OpCompleteUpload, Key: key, Cond: cond}, func() (err error) {
		etag, err = f.api.CompleteUpload(ctx, key, id, parts, cond)
		return err
	})
	return etag, err
}

func (f *Faults) AbortUpload(ctx context.Context, key, id string) error {
	return f.do(ctx, Call{Op: OpAbortUpload, Key: key}, func() error {
		return f.api.AbortUpload(ctx, key, id)
	})
}

func (f *Faults) ListUploads(ctx context.Context, in s3store.ListUploadsInput) (page *s3store.UploadsPage, err error) {
	err = f.do(ctx, Call{Op: OpListUploads, Key: in.Prefix}, func() (err error) {
		page, err = f.api.ListUploads(ctx, in)
		return err
	})
	return page, err
}
