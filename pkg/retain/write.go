package retain

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/retval/retval/internal/iox"
	"github.com/retval/retval/pkg/retain/internal/backend"
	"github.com/retval/retval/pkg/retain/internal/backend/object"
)

// RetainOptions says where a result goes and under which limits.
type RetainOptions struct {
	Run    string // run id, sanitized
	Call   string // call id, sanitized into the value id
	Meta   Meta
	Limits Limits
	Policy Policy
	// Compress is "none" (or empty), "zstd" or "auto": seekable zstd for
	// values of at least 1 MiB whose first 256 KiB compress at least 1.5×.
	Compress string
	// ReadMore is the form of the stub's read-more line ("" is ReadMorePeek).
	ReadMore ReadMore
	// Via names who shows the model what retain returns, in the read log
	// ("" is "retain"; the hook says "hook", the MCP proxy "proxy").
	Via string
	// Note is text the caller shows the model right after a stub (the
	// hook says where an MCP result's text came from). It is not part of
	// the stub; the read log counts it with the stub's bytes.
	Note string
	// Finish, when set, is called once the input has been read to its end,
	// before the descriptor is made: the Meta it returns replaces Meta.
	// It is how what is known only at the end (a command's exit status)
	// reaches the descriptor of a value streamed as it was produced.
	Finish func() Meta
	// ShowLater: the caller shows the stub itself (Result.Stub) and
	// calls LogShown once it has, so that a stub that never reached the
	// model (its write failed: a full disk, a closed pipe) is not counted
	// as shown. Without it Retain records the stub as shown when it
	// returns. A verbatim result, written by Retain to out, is recorded
	// as it was written either way.
	ShowLater bool
}

// Result is what Retain did.
type Result struct {
	// Retained is true when the value is (now or already) in the store.
	Retained bool
	// Verbatim is true when the input itself went to out: it was within the
	// threshold, or the store could not take it (see Warning).
	Verbatim bool
	// Stub is what the model should see instead of the input; empty when
	// Verbatim.
	Stub string
	// NotRetained is the capacity reason under the legacy policy.
	NotRetained string
	// Descriptor describes the input. For a value not stored, only the fields
	// decided by its bytes are set (nil when the input went out verbatim).
	Descriptor *Descriptor
	// Warning is the write failure that made retain fall back to Verbatim.
	Warning error
}

const (
	chunkSize = 1 << 20
	nBufs     = 4
	prefixMax = 4 << 20 // bytes held in memory before deciding to spill
	autoMin   = 1 << 20 // --compress auto leaves smaller values plain
)

// Retain reads a tool result from in. A result within the threshold is
// copied to out unchanged and nothing is stored. A larger one is stored and
// the Result carries the stub to show instead. If the store cannot take it,
// the input still reaches out unchanged (Verbatim, with a Warning) and no
// file is left behind; a stub never points at nothing.
//
// Errors: usage (bad ids), conflict (the call id holds different bytes),
// capacity (bounded policy), or a failure to read in or write out.
//
// What the model is shown — the stub, a verbatim result, a capacity
// preview — is recorded in the run's read log (see LogRead).
func (s *Store) Retain(in io.Reader, out io.Writer, o RetainOptions) (*Result, error) {
	cw := &iox.CountingWriter{W: out}
	res, err := s.retainInput(in, cw, o)
	if err == nil && !object.TestHookDiesBeforeTombstone && (res.Verbatim || !o.ShowLater) {
		s.logRetain(o, res, cw.N)
	}
	return res, err
}

// LogShown records in the run's read log that the stub of res (a result
// of Retain with o.ShowLater) was shown. Call it once the stub was
// written where the model reads it; a verbatim result was recorded by
// Retain already.
func (s *Store) LogShown(o RetainOptions, res *Result) {
	if res == nil || res.Verbatim {
		return
	}
	s.logRetain(o, res, 0)
}

// logRetain records what retain showed instead of the result.
func (s *Store) logRetain(o RetainOptions, res *Result, verbatim int64) {
	run, err := Sanitize(o.Run)
	if err != nil {
		return
	}
	id, _ := Sanitize(o.Call)
	r := Read{Via: o.Via, Value: id, Tool: o.Meta.Tool, Bytes: int64(len(res.Stub))}
	if res.Descriptor != nil && res.Descriptor.Tool != "" {
		r.Tool = res.Descriptor.Tool
	}
	if r.Via == "" {
		r.Via = "retain"
	}
	switch {
	case res.Verbatim:
		r.Op, r.Bytes, r.Size = OpVerbatim, verbatim, verbatim
	case res.Retained:
		r.Op, r.Size = OpStub, res.Descriptor.Size
		r.Bytes += int64(len(o.Note))
	case res.Descriptor != nil:
		r.Op, r.Size = OpPreview, res.Descriptor.Size
	default:
		return
	}
	s.LogRead(run, r)
}

func (s *Store) retainInput(in io.Reader, out io.Writer, o RetainOptions) (*Result, error) {
	run, err := Sanitize(o.Run)
	if err != nil {
		return nil, Errorf(CodeUsage, "run id: %v", err)
	}
	id, err := Sanitize(o.Call)
	if err != nil {
		return nil, Errorf(CodeUsage, "call id: %v", err)
	}
	L := o.Limits.Effective()

	// Read up to the threshold first: most results are small and are
	// passed through without touching the disk.
	var prefix []byte
	want := int64(0)
	if L.Threshold > 0 {
		want = min(L.Threshold+1, prefixMax)
	}
	if o.Compress == "auto" {
		want = max(want, autoMin+1) // enough to apply the auto rule
	}
	if want > 0 {
		prefix = make([]byte, want)
		n, err := io.ReadFull(in, prefix)
		prefix = prefix[:n]
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			if L.Threshold > 0 && int64(n) <= L.Threshold {
				_, err := out.Write(prefix)
				return &Result{Verbatim: true}, err
			}
		case err != nil:
			return nil, fmt.Errorf("reading input: %w", err)
		}
	}

	comp := CompressNone
	switch o.Compress {
	case "", "none":
	case "zstd":
		comp = CompressZstd
	case "auto":
		if len(prefix) >= autoMin && worthCompressing(prefix) {
			comp = CompressZstd
		}
	default:
		return nil, Errorf(CodeUsage, "unknown compression %q: want none, zstd or auto", o.Compress)
	}
	w := &writer{store: s, runID: run, id: id, opts: o, lim: L, out: out, comp: comp}
	return w.do(prefix, in)
}

// writer carries one retain through its stages.
type writer struct {
	store *Store
	runID ID
	id    ID
	opts  RetainOptions
	lim   Effective // opts.Limits with defaults applied
	out   io.Writer

	comp Compression
	// run is the backend's side of this retain: its hold on the run, and
	// how the value is committed there.
	run    backend.ValueWrite
	sink   sink // the temporary content file; nil once committed
	st     *stats
	tooBig bool // the value passed max-value-size: no longer written
	// old is the call's descriptor when the retain began: this may be the
	// same value again, which no limit refuses (commit decides); once the
	// input is longer than old, it is not.
	old *Descriptor
}

// dropSink stops and removes the temporary content file.
func (w *writer) dropSink() {
	if w.sink != nil {
		if z, ok := w.sink.(*zstdSink); ok {
			z.abort()
		}
		f := w.sink.File()
		f.Close()
		os.Remove(f.Name())
		w.sink = nil
	}
}

func (w *writer) close() {
	w.dropSink()
	if w.run != nil {
		w.run.Close()
		w.run = nil
	}
}

func (w *writer) do(prefix []byte, in io.Reader) (*Result, error) {
	defer w.close()
	L := w.lim
	w.st = newStats(L.PreviewBytes, true)

	if err := w.open(); err != nil {
		return w.fallback(prefix, in, err)
	}

	// Stream in three stages: this goroutine reads and writes, one worker
	// hashes, another keeps the other statistics; a buffer is read into
	// again only when both workers are done with it.
	pl := newPipeline(w.st)
	defer pl.finish()
	var consumed int64
	bufs := make([][]byte, nBufs)
	// feed hands p to the workers and the sink; on a write failure it
	// returns how much of p the sink accepted.
	feed := func(p []byte) (int, error) {
		if len(p) == 0 {
			return 0, nil
		}
		pl.send(p)
		consumed += int64(len(p))
		if w.tooBig {
			return len(p), nil
		}
		if L.MaxValueSize > 0 && consumed > L.MaxValueSize && consumed > L.Threshold && (w.old == nil || consumed > w.old.Size) {
			// Past the limit: keep hashing for the stub, stop storing.
			w.tooBig = true
			pl.noIndex.Store(true)
			w.dropSink()
			return len(p), nil
		}
		return w.sink.Write(p)
	}
	var rest []byte // bytes consumed but not yet written when a write failed
	var werr error
	for off := 0; off < len(prefix) && werr == nil; off += chunkSize {
		// The prefix is never reused, so it can go to the workers as is.
		p := prefix[off:min(off+chunkSize, len(prefix))]
		var n int
		if n, werr = feed(p); werr != nil {
			rest = p[n:]
		}
	}
	for i := 0; werr == nil; i++ {
		if pl.inflight >= nBufs {
			pl.reclaim()
		}
		b := bufs[i%nBufs]
		if b == nil {
			b = make([]byte, chunkSize)
			bufs[i%nBufs] = b
		}
		n, rerr := io.ReadFull(in, b)
		var k int
		if k, werr = feed(b[:n]); werr != nil {
			rest = b[k:n]
			break
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			return nil, fmt.Errorf("reading input: %w", rerr)
		}
	}
	pl.finish()
	if werr != nil {
		return w.fallbackAfterWrite(rest, in, werr)
	}
	if L.Threshold > 0 && consumed <= L.Threshold {
		// Spilled to disk while undecided, and small after all.
		return w.fallbackAfterWrite(nil, in, nil)
	}

	if w.opts.Finish != nil {
		w.opts.Meta = w.opts.Finish()
	}
	m := w.opts.Meta
	d := &Descriptor{ID: w.id, Run: w.runID, Tool: truncateUTF8(m.Tool, MaxToolBytes),
		Complete: !m.Partial && !m.Stopped, OmittedBytes: m.OmittedBytes,
		ExitCode: m.ExitCode, TimedOut: m.TimedOut, Stopped: m.Stopped, KeptTail: m.Partial && m.KeptTail, Stderr: m.Stderr,
		Compression: w.comp}
	setCallID(d, w.opts.Call)
	w.st.descriptor(d)
	if w.tooBig && w.old != nil {
		// Longer than the value the call holds: other bytes.
		return nil, w.conflict(w.old)
	}
	if w.tooBig {
		return w.atCapacity(d, fmt.Sprintf("%d bytes exceed max-value-size %d", d.Size, L.MaxValueSize))
	}
	return w.commit(d, in)
}

// open begins the retain in the backend (which may create the run and
// hold it) and creates the temporary content file.
func (w *writer) open() error {
	b, err := w.store.backend()
	if err != nil {
		return err
	}
	if w.run, err = b.BeginWrite(w.runID, w.id); err != nil {
		return err
	}
	w.old = w.run.Old()
	tmp, start, err := w.run.Spool()
	if err != nil {
		return err
	}
	if w.comp == CompressZstd {
		w.sink = newZstdSink(tmp, start)
	} else {
		w.sink = newPlainSink(tmp, start)
	}
	return nil
}

// fallback prints the input unchanged when nothing could be written.
func (w *writer) fallback(prefix []byte, in io.Reader, cause error) (*Result, error) {
	if _, err := w.out.Write(prefix); err != nil {
		return nil, err
	}
	if _, err := io.Copy(w.out, in); err != nil {
		return nil, err
	}
	return &Result{Verbatim: true, Warning: storeWarning(cause)}, nil
}

// fallbackAfterWrite prints the input unchanged after some of it went to
// the temporary file: that part is read back, then rest, then the
// remaining input. cause is nil when the value simply was small.
func (w *writer) fallbackAfterWrite(rest []byte, in io.Reader, cause error) (*Result, error) {
	if w.sink == nil {
		// Cannot happen: only values past the threshold stop being stored.
		return nil, fmt.Errorf("retain: lost the bytes already consumed")
	}
	if err := w.sink.ReadBack(w.out); err != nil {
		return nil, err
	}
	if _, err := w.out.Write(rest); err != nil {
		return nil, err
	}
	if _, err := io.Copy(w.out, in); err != nil {
		return nil, err
	}
	r := &Result{Verbatim: true}
	if cause != nil {
		r.Warning = storeWarning(cause)
	}
	return r, nil
}

func storeWarning(err error) error {
	return fmt.Errorf("could not retain, printed the output in full instead: %w", err)
}

// atCapacity handles a value the run cannot take.
func (w *writer) atCapacity(d *Descriptor, reason string) (*Result, error) {
	if w.opts.Policy == PolicyBounded {
		return nil, Errorf(CodeCapacity, "not retained: %s (raise the limit or start a new run)", reason)
	}
	return &Result{Descriptor: d, NotRetained: reason, Stub: w.stub(d, reason)}, nil
}

func (w *writer) stub(d *Descriptor, notRetained string) string {
	L := w.lim
	first, last := w.st.lineEnds()
	return RenderStub(StubInput{ID: d.ID, Size: d.Size, Lines: d.Lines, SHA256: d.SHA256, Meta: metaOf(d),
		Head: w.st.head, Tail: w.st.tailBytes(), PreviewBytes: L.PreviewBytes, PeekLines: L.PeekLines,
		NotRetained: notRetained, HeaderOnly: w.opts.Policy == PolicyBounded,
		ReadMore: w.opts.ReadMore, Run: w.runID, RunsDir: w.store.Dir, NDJSON: d.NDJSON,
		FirstNewline: first, LastLineStart: last})
}

// retainedStub is the stub of the committed value d: for a JSON value,
// the stub replay rebuilds from the stored value (it may outline the
// document, which takes reading it again).
func (w *writer) retainedStub(d *Descriptor) string {
	if !d.JSON || w.opts.Policy == PolicyBounded {
		return w.stub(d, "")
	}
	if v, err := w.store.openValue(string(w.runID), string(w.id), false); err == nil {
		defer v.Close()
		st := w.opts.Limits.StubSettings(w.opts.Policy)
		st.ReadMore, st.RunsDir = w.opts.ReadMore, w.store.Dir
		if stub, err := v.Stub(st); err == nil {
			return stub
		}
	}
	return w.stub(d, "")
}

// commit makes the value exist, through the backend, once the input
// is read to its end. A store that could not take it gets the input out
// verbatim: a stub never names nothing.
func (w *writer) commit(d *Descriptor, in io.Reader) (*Result, error) {
	stored, err := w.sink.Finish()
	if err != nil {
		return w.fallbackAfterWrite(nil, in, err)
	}
	b, err := w.store.backend()
	if err != nil {
		return w.fallbackAfterWrite(nil, in, err)
	}
	c := &backend.CommitReq{Run: w.runID, ID: w.id, Desc: d, Comp: w.comp, Content: w.sink.File(), Stored: stored,
		Limits: backend.RunLimits{MaxValueSize: w.lim.MaxValueSize, MaxRunValues: w.lim.MaxRunValues, MaxRunBytes: w.lim.MaxRunBytes}, Now: w.store.now,
		Verify: func(committed func(ID) (*Descriptor, *valueProblem), hasIndex bool) []Problem {
			var n int64
			return verifyValue(b, committed, w.runID, w.id, hasIndex, &n)
		}}
	if w.st.size > IndexMinSize {
		c.Index = w.st.index.Finish(w.st.sha.Sum(nil))
	}
	r := w.run.Commit(c)
	if r.Taken {
		w.sink.File().Close()
		w.sink = nil
	}
	switch {
	case r.Err != nil:
		return nil, r.Err
	case r.Conflict != nil:
		return nil, w.conflict(r.Conflict)
	case r.Full != "":
		return w.atCapacity(d, r.Full)
	case r.Failed != nil:
		return w.fallbackAfterWrite(nil, in, r.Failed)
	}
	return &Result{Retained: true, Descriptor: r.Value, Stub: w.retainedStub(r.Value)}, nil
}

// conflict is the error for other bytes under a call that holds old.
func (w *writer) conflict(old *Descriptor) error {
	return Errorf(CodeConflict, "call %q of run %q is already retained with different bytes (sha256 %s, %d bytes); values are immutable: use a new call id", w.opts.Call, w.runID, old.SHA256, old.Size)
}

// pipeline runs the SHA-256 and the other statistics of a value on two
// goroutines, in the order the chunks were sent.
type pipeline struct {
	shaIn, statIn     chan []byte
	shaDone, statDone chan struct{}
	inflight          int
	noIndex           atomic.Bool
	wg                sync.WaitGroup
	finished          bool
}

func newPipeline(st *stats) *pipeline {
	const depth = nBufs + prefixMax/chunkSize
	p := &pipeline{
		shaIn: make(chan []byte, depth), statIn: make(chan []byte, depth),
		shaDone: make(chan struct{}, depth), statDone: make(chan struct{}, depth),
	}
	p.wg.Go(func() {
		for b := range p.shaIn {
			st.sha.Write(b)
			p.shaDone <- struct{}{}
		}
	})
	p.wg.Go(func() {
		for b := range p.statIn {
			if p.noIndex.Load() {
				st.index = nil
			}
			st.add(b)
			p.statDone <- struct{}{}
		}
	})
	return p
}

func (p *pipeline) send(b []byte) {
	p.shaIn <- b
	p.statIn <- b
	p.inflight++
}

// reclaim waits until the oldest chunk sent is done with.
func (p *pipeline) reclaim() {
	<-p.shaDone
	<-p.statDone
	p.inflight--
}

// finish waits for both workers to drain; the stats are then complete.
func (p *pipeline) finish() {
	if p.finished {
		return
	}
	p.finished = true
	close(p.shaIn)
	close(p.statIn)
	for p.inflight > 0 {
		p.reclaim()
	}
	p.wg.Wait()
}
