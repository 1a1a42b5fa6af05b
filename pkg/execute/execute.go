// Package execute runs a command and retains what it printed: the shell
// harness's "run this tool call" in one step. The command's output is
// streamed into the store as it comes (memory stays bounded whatever it
// prints), its exit status and whether it timed out go into the value's
// descriptor, and the caller gets the stub to show (or the output itself,
// already written, when it was small) and the status to exit with, as
// timeout(1) gives it: the command's own, 124 on timeout, 128+N when
// signal N ended it.
//
// A Go harness calls Run with a *retain.Store and Options; the CLI's
// `retval exec` is Run and nothing more.
package execute

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/retval/retval/internal/fsx"
	"github.com/retval/retval/internal/iox"
	"github.com/retval/retval/internal/procgroup"
	"github.com/retval/retval/pkg/retain"
)

// StderrMode says what becomes of the command's standard error.
type StderrMode string

const (
	// Merged (the default) retains stdout and stderr as one value,
	// interleaved as a terminal would show them: both are one pipe.
	Merged StderrMode = "merged"
	// Separate retains stderr as a value of its own, call id
	// "<call>.stderr".
	Separate StderrMode = "separate"
)

// StderrSuffix is appended to the call id of the stderr value (Separate).
const StderrSuffix = ".stderr"

// Status of a command stopped by its timeout, as timeout(1) reports it.
const StatusTimedOut = 124

// Options says what to run and how to retain it.
type Options struct {
	// Retain is where the output goes and under which limits: Run, Call
	// ("" picks a short call id unused in the run, see Result.Call),
	// Meta.Tool, Limits, Policy, Compress, ReadMore. Meta's exit status,
	// timed-out and partial fields are Run's to fill.
	Retain retain.RetainOptions
	// Args is the command and its arguments; Args[0] is looked up in PATH.
	Args []string
	// Stdin is passed to the command (nil: no input). One that is not an
	// *os.File is copied in by a goroutine, which may still sit in a Read
	// of it after Run has returned.
	Stdin io.Reader
	// Out receives stdout (merged: both streams) when it is small enough
	// to be shown as it is (nil: discarded); a retained output's stub is
	// in the Result.
	Out io.Writer
	// ErrOut is Out for stderr, with Separate (nil: discarded).
	ErrOut io.Writer
	// Timeout > 0 kills the command's whole process group after that long.
	Timeout time.Duration
	// Tail > 0 keeps only the last Tail bytes of each stream, as a test
	// runner does: the value is then partial, with the exact number of
	// bytes discarded. The tail is held in memory, so Tail is at most
	// the max value size.
	Tail int64
	// StopAtMaxValueSize: the caller chose the max value size and asks
	// that an output passing it stop the command there (its process
	// group is killed; the value is its first bytes, marked stopped).
	// Otherwise nothing retval decides stops the command — not the max
	// value size, not a run at its byte or value cap: it runs to its end,
	// and an output the run cannot take is answered as retain answers it
	// (a preview marked not retained under the legacy policy, naming the
	// limit; a capacity error under the bounded one). Only this and
	// Timeout stop a command.
	StopAtMaxValueSize bool
	// Stderr is Merged ("" too) or Separate.
	Stderr StderrMode
	// Signals are forwarded to the command's process group as they come
	// (the CLI passes SIGINT and SIGTERM); the output so far is kept.
	Signals <-chan os.Signal
	// Exited, when set, is called once the command has exited, before
	// Run learns it and the rest of its output is read and retained (on
	// another goroutine). Signals are no longer forwarded then: there is
	// nothing left to forward them to. (The CLI lets the first signal
	// after it be, so that what the command printed is still committed
	// and shown, and lets a second one end retval.)
	Exited func()
	// NewCall makes a candidate automatic call id (nil: random ones).
	NewCall func() string
	// Off passes the output through to Out (stderr: to ErrOut with
	// Separate, else Out too) and stores nothing: retain gated off.
	Off bool
}

// Result is what Run did.
type Result struct {
	// Call is the call id the output was retained under: Options'
	// Retain.Call, or the one picked for it.
	Call string
	// Status is the exit status to report: the command's, StatusTimedOut
	// when the timeout stopped it, 128+N when signal N ended it.
	Status   int
	TimedOut bool
	// Stopped is true when the output passed the max value size and the
	// command was stopped there.
	Stopped bool
	// Stdout is what became of stdout (merged: of both streams); Stderr
	// that of stderr with Separate, else nil.
	Stdout, Stderr *retain.Result
	// Warning says what was not retained as asked, though nothing was
	// lost (stderr printed as it came, the run having room for stdout
	// alone).
	Warning error
}

func usage(format string, args ...any) error { return retain.Errorf(retain.CodeUsage, format, args...) }

// Run runs o.Args and retains its output in s. When the command cannot be
// started, or an explicit call id already names a value, or the run
// cannot take another value, the error says it did not run, and there is
// no Result. Once it has run, the Result is always returned, with its
// Status, even when retaining failed (the error then says why).
func Run(s *retain.Store, o Options) (*Result, error) {
	if len(o.Args) == 0 || o.Args[0] == "" {
		return nil, usage("no command given: put it after --, as in retval exec -- go test ./...")
	}
	if o.Off {
		return passThrough(o)
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if _, err := retain.Sanitize(o.Retain.Run); err != nil {
		return nil, usage("run id: %v", err)
	}
	L := o.Retain.Limits.Effective()
	switch {
	case o.Tail < 0:
		return nil, usage("--tail must be ≥ 0")
	case o.Tail > 0 && L.MaxValueSize > 0 && o.Tail > L.MaxValueSize:
		return nil, usage("--tail %d is larger than max-value-size %d: the tail could not be retained; lower --tail or raise --max-value-size", o.Tail, L.MaxValueSize)
	}
	switch o.Stderr {
	case "", Merged, Separate:
	default:
		return nil, usage("invalid --stderr %q: want merged or separate", o.Stderr)
	}
	call := o.Retain.Call
	if call == "" {
		var err error
		if call, err = pickCall(s, o); err != nil {
			return nil, err
		}
	} else if _, err := retain.Sanitize(call); err != nil {
		return nil, usage("call id: %v", err)
	}
	// A call id that already names a value: the output is retained again
	// (the same bytes give the same stub) or, being other bytes, shown in
	// full; it is kept aside meanwhile, so that either way nothing is lost.
	again := s.Taken(o.Retain.Run, call) || (o.Stderr == Separate && s.Taken(o.Retain.Run, call+StderrSuffix))
	// The run's room costs a read of its descriptors: it is read only
	// where it decides something before the command starts (a bounded run
	// that is full would lose the output; a separate stderr yields the
	// last value to stdout).
	room := unknownRoom
	if o.Retain.Policy == retain.PolicyBounded || o.Stderr == Separate {
		var err error
		if room, err = roomOf(s, o.Retain.Run, L); err != nil {
			return nil, err
		}
	}
	if o.Retain.Policy == retain.PolicyBounded && room.values == 0 && !again {
		return nil, retain.Errorf(retain.CodeCapacity, "run %q holds max-run-values %d values; the command did not run: raise the limit or start a new run", o.Retain.Run, L.MaxRunValues)
	}

	p, err := start(o)
	if err != nil {
		return nil, err
	}
	defer p.group.Close()
	go p.watch(o.Timeout, o.Signals)
	res := &Result{Call: call}
	streams := []*stream{{r: p.stdout, out: o.Out, call: call, again: again}}
	if p.stderr != nil {
		errOut := o.ErrOut
		if errOut == nil {
			errOut = io.Discard
		}
		st := &stream{r: p.stderr, out: errOut, call: call + StderrSuffix, again: again, done: make(chan struct{})}
		if room.values == 1 {
			// One value left: it is stdout's, the primary output;
			// stderr goes through as it comes.
			st.through = true
			res.Warning = fmt.Errorf("run %q has room for one more value: it holds stdout, stderr was printed as it came", o.Retain.Run)
		}
		streams = append(streams, st)
		// The stdout value names the stderr value, so it is committed
		// once stderr's is decided.
		streams[0].stderr = func() retain.ID {
			<-st.done
			if st.res != nil && st.res.Retained {
				return st.res.Descriptor.ID
			}
			return ""
		}
	}
	var wg sync.WaitGroup
	for _, st := range streams {
		wg.Go(func() {
			if st.through {
				st.err = p.copyOut(st.out, st.r)
			} else {
				st.res, st.err = p.retain(s, o, L, st)
			}
			if st.done != nil {
				close(st.done)
			}
		})
	}
	wg.Wait()
	<-p.exited
	res.Status, res.TimedOut, res.Stopped = p.result()
	res.Stdout = streams[0].res
	var errs []error
	for _, st := range streams {
		errs = append(errs, st.err)
	}
	if len(streams) > 1 {
		res.Stderr = streams[1].res
	}
	return res, errors.Join(errs...)
}

// room is how many values the run can still take (-1: no limit);
// unknownRoom is not read yet. (Its bytes never stop a command: see
// Options.StopAtMaxValueSize.)
type room struct{ values int64 }

var unknownRoom = room{values: -2}

// roomOf reads the run's values against its limit. A run that does not
// exist yet has all the room.
func roomOf(s *retain.Store, run string, L retain.Effective) (room, error) {
	r := room{values: -1}
	if L.MaxRunValues == 0 {
		return r, nil
	}
	vals, err := s.Values(run)
	if c := retain.CodeOf(err); c == retain.CodeUnknownReference || c == retain.CodeCollected {
		// No values yet: retain decides what becomes of the run.
		vals, err = nil, nil
	}
	if err != nil {
		return r, err
	}
	r.values = max(0, L.MaxRunValues-int64(len(vals)))
	return r, nil
}

// passThrough runs the command with its output going straight to Out.
func passThrough(o Options) (*Result, error) {
	out := o.Out
	if out == nil {
		out = io.Discard
	}
	errOut := o.ErrOut
	if errOut == nil {
		errOut = io.Discard
	}
	p, err := start(o)
	if err != nil {
		return nil, err
	}
	defer p.group.Close()
	go p.watch(o.Timeout, o.Signals)
	var wg sync.WaitGroup
	var errs [2]error
	wg.Go(func() { errs[0] = p.copyOut(out, p.stdout) })
	if p.stderr != nil {
		wg.Go(func() { errs[1] = p.copyOut(errOut, p.stderr) })
	}
	wg.Wait()
	<-p.exited
	status, timedOut, _ := p.result()
	return &Result{Status: status, TimedOut: timedOut}, errors.Join(errs[:]...)
}

// copyOut copies one of the command's pipes to w. When w fails (a closed
// pipe, a full disk), the pipe is closed, so that the command learns of
// it as it would writing there itself (SIGPIPE), and the error is
// returned once the command is done.
func (p *proc) copyOut(w io.Writer, r *os.File) error {
	defer r.Close()
	_, err := io.Copy(w, iox.NewPipeReader(r))
	if err != nil {
		r.Close()
		return fmt.Errorf("writing the command's output: %w", err)
	}
	return nil
}

// stream is one of the command's output pipes on its way to the store.
type stream struct {
	r    *os.File
	out  io.Writer
	call string
	res  *retain.Result
	err  error
	// through: the run has no room for this stream, which is copied to
	// out as it comes.
	through bool
	// again: the call id names a value already; the output is kept aside
	// until it is known to be the same (see keptAside).
	again bool
	// done is closed once res and err are set (the stderr stream's).
	done chan struct{}
	// stderr, for stdout beside a separate stderr, waits for the stderr
	// value and returns its id ("" when it was not retained).
	stderr func() retain.ID
}

// proc is the running command.
type proc struct {
	cmd            *exec.Cmd
	group          *procgroup.Group
	stdout, stderr *os.File // the read ends of its pipes
	tty            *os.File // the terminal it was given, or nil
	stdin          *os.File // the write end of its stdin, fed from Options.Stdin

	exited chan struct{} // closed once it has been waited for
	onExit func()        // Options.Exited
	// reapedCh is closed once its status is decided; watch then stops
	// forwarding signals and closes watched, which reap waits for before
	// it calls onExit: no signal that comes after is taken by watch.
	reapedCh, watched chan struct{}
	mu                sync.Mutex
	reaped            bool // its status is decided (exited can be closed later)
	timedOut          bool
	stopped           bool
	status            int
}

func isFile(r io.Reader) bool {
	_, ok := r.(*os.File)
	return ok
}

// Test seams: the timeout's timer, and what reap does once the command's
// status is decided, before Run learns it exited.
var (
	newTimer = func(d time.Duration) (<-chan time.Time, func() bool) {
		t := time.NewTimer(d)
		return t.C, t.Stop
	}
	statusDecided = func() {}
)

// Linger is how long the pipes are still read once the command has
// exited (or was killed): what it wrote just before is in them, but a
// process it left behind may hold them open for as long as it likes.
var Linger = 250 * time.Millisecond

// start starts the command in a process group of its own, so that a
// timeout or a forwarded signal reaches everything it started. When
// stdin is the terminal retval runs in the foreground of, the command's
// group is given the terminal (as a shell does), so that it can read it
// and ^C reaches it, and retval takes it back once the command is done.
func start(o Options) (*proc, error) {
	outR, outW, err := iox.Pipe()
	if err != nil {
		return nil, err
	}
	p := &proc{stdout: outR, exited: make(chan struct{}), onExit: o.Exited, reapedCh: make(chan struct{}), watched: make(chan struct{})}
	closeAll := []*os.File{outW}
	cmd := exec.Command(o.Args[0], o.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = o.Stdin, outW, outW
	if o.Stderr == Separate {
		errR, errW, err := iox.Pipe()
		if err != nil {
			outR.Close()
			outW.Close()
			return nil, err
		}
		p.stderr, cmd.Stderr = errR, errW
		closeAll = append(closeAll, errW)
	}
	if f, ok := o.Stdin.(*os.File); ok && foregroundTTY(f) {
		p.tty = f
		cmd.SysProcAttr = giveTerminal(f)
	}
	if o.Stdin != nil && !isFile(o.Stdin) {
		// Stdin that is not a file is copied in by a goroutine of ours,
		// which may sit in a read after the command is gone: exec does
		// not wait for it (the pipe is closed once the command exited).
		inR, inW, err := os.Pipe()
		if err != nil {
			outR.Close()
			outW.Close()
			return nil, err
		}
		cmd.Stdin, p.stdin = inR, inW
		closeAll = append(closeAll, inR)
	}
	p.cmd = cmd
	p.group, err = procgroup.Start(cmd, true)
	for _, f := range closeAll {
		f.Close() // the command holds its own copies
	}
	if err != nil {
		outR.Close()
		if p.stderr != nil {
			p.stderr.Close()
		}
		if p.stdin != nil {
			p.stdin.Close()
		}
		return nil, usage("cannot run %q: %v; the command did not run", o.Args[0], unwrapExec(err))
	}
	if p.stdin != nil {
		go func() {
			io.Copy(p.stdin, o.Stdin)
			p.stdin.Close()
		}()
	}
	go p.reap()
	return p, nil
}

// reap waits for the command itself, sets its status, takes the terminal
// back, and gives the pipes Linger more to drain: a process the command
// left running cannot keep exec waiting.
func (p *proc) reap() {
	p.cmd.Wait()
	p.group.CommandExited()
	ws, _ := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	p.mu.Lock()
	p.reaped = true
	switch {
	case p.timedOut:
		p.status = StatusTimedOut
	case ws.Signaled():
		p.status = 128 + int(ws.Signal())
	default:
		p.status = ws.ExitStatus()
	}
	p.mu.Unlock()
	statusDecided()
	close(p.reapedCh)
	<-p.watched
	if p.tty != nil {
		takeTerminal(p.tty)
	}
	if p.stdin != nil {
		p.stdin.Close()
	}
	if p.onExit != nil {
		p.onExit()
	}
	close(p.exited)
	end := time.Now().Add(Linger)
	for _, f := range []*os.File{p.stdout, p.stderr} {
		if f != nil {
			f.SetReadDeadline(end)
		}
	}
}

// result is the command's status, whether it timed out and whether it
// was stopped at the max value size; it has exited.
func (p *proc) result() (int, bool, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status, p.timedOut, p.stopped
}

// unwrapExec drops os/exec's repetition of the command's name.
func unwrapExec(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// kill sends sig to the command's process group (see procgroup.Signal
// for what that is on Windows).
func (p *proc) kill(sig syscall.Signal) { p.group.Signal(sig) }

// watch stops the command at its timeout and forwards signals, until it
// has exited. The command timed out only if it still ran when the timer
// fired: if its status is decided (reaped, under the same lock), it did
// not, even when Run has not learnt it yet (exited still open).
func (p *proc) watch(timeout time.Duration, signals <-chan os.Signal) {
	defer close(p.watched)
	var expired <-chan time.Time
	if timeout > 0 {
		var stop func() bool
		expired, stop = newTimer(timeout)
		defer stop()
	}
	for {
		select {
		case <-p.reapedCh:
			return
		default:
		}
		select {
		case <-p.reapedCh:
			return
		case <-expired:
			p.mu.Lock()
			running := !p.reaped
			p.timedOut = p.timedOut || running
			p.mu.Unlock()
			if running {
				p.kill(syscall.SIGKILL)
			}
		case sig := <-signals:
			if s, ok := sig.(syscall.Signal); ok {
				p.kill(s)
			}
		}
	}
}

// stop stops the command because its output passed what can be kept.
func (p *proc) stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	p.kill(syscall.SIGKILL)
}

// meta is what the descriptor records once the command is done.
func (p *proc) meta(base retain.Meta, stopped bool) retain.Meta {
	<-p.exited
	status, timedOut, _ := p.result()
	m := base
	m.ExitCode, m.TimedOut, m.Stopped = &status, timedOut, stopped
	return m
}

// retain streams one pipe into the store: as it comes, stopping the
// command where the value could not be kept whole; or with Tail, keeping
// the last bytes and retaining them once the command is done.
func (p *proc) retain(s *retain.Store, o Options, L retain.Effective, st *stream) (*retain.Result, error) {
	defer st.r.Close()
	ro := o.Retain
	ro.Call = st.call
	base := retain.Meta{Tool: ro.Meta.Tool}
	withStderr := func(m retain.Meta) retain.Meta {
		if st.stderr != nil {
			m.Stderr = st.stderr()
		}
		return m
	}
	if o.Tail > 0 {
		t := newTail(o.Tail)
		n, err := io.Copy(t, iox.NewPipeReader(st.r))
		if err != nil {
			return nil, fmt.Errorf("reading the command's output: %w", err)
		}
		m := withStderr(p.meta(base, false))
		if omitted := n - t.Len(); omitted > 0 {
			m.Partial, m.KeptTail, m.OmittedBytes = true, true, &omitted
		}
		ro.Meta = m
		res, err := s.Retain(t.Reader(), st.out, ro)
		if c := retain.CodeOf(err); st.again && (c == retain.CodeConflict || c == retain.CodeCapacity) {
			if _, werr := io.Copy(st.out, t.Reader()); werr != nil {
				return nil, errors.Join(err, werr)
			}
			return &retain.Result{Verbatim: true, Warning: fmt.Errorf("could not retain, printed the output in full instead: %w", err)}, nil
		}
		return res, err
	}
	c := &capped{r: iox.NewPipeReader(st.r), after: L.Threshold, stop: p.stop, limit: func() int64 {
		return stopAt(L, o.StopAtMaxValueSize)
	}}
	ro.Finish = func() retain.Meta { return withStderr(p.meta(base, c.stopped)) }
	if st.again {
		return keptAside(s, c, st, ro)
	}
	res, err := s.Retain(c, st.out, ro)
	if err != nil {
		// The command may still be writing: unblock it, it is not read.
		st.r.Close()
	}
	return res, err
}

// keptAside retains an output whose call id names a value already: it is
// read into an unlinked temporary file first, so that when the value
// holds other bytes (a conflict) or the run cannot take it, the output is
// shown in full instead, with a warning, rather than lost.
func keptAside(s *retain.Store, in io.Reader, st *stream, ro retain.RetainOptions) (*retain.Result, error) {
	f, err := fsx.CreateTemp("", "retval-exec-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	defer f.Close()
	if _, err := io.Copy(f, in); err != nil {
		st.r.Close()
		return nil, fmt.Errorf("keeping the command's output aside: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	res, err := s.Retain(f, st.out, ro)
	if c := retain.CodeOf(err); c != retain.CodeConflict && c != retain.CodeCapacity {
		return res, err
	}
	if _, serr := f.Seek(0, io.SeekStart); serr != nil {
		return nil, errors.Join(err, serr)
	}
	if _, werr := io.Copy(st.out, f); werr != nil {
		return nil, errors.Join(err, werr)
	}
	return &retain.Result{Verbatim: true, Warning: fmt.Errorf("could not retain, printed the output in full instead: %w", err)}, nil
}

// stopAt is how much of an output is read before the command is stopped
// (-1: no end): max-value-size where the caller asked for that
// (Options.StopAtMaxValueSize), else no end — a run at its byte cap never
// stops a command. Where the limit is within the threshold, an output up
// to the threshold is still shown whole, and one past it reaches retain
// one byte over, where it is refused as too big as retain would refuse
// it: never is a cut output passed off as the whole.
func stopAt(L retain.Effective, stopAtMax bool) int64 {
	if !stopAtMax || L.MaxValueSize <= 0 {
		return -1
	}
	limit := L.MaxValueSize
	if L.Threshold > 0 && limit <= L.Threshold {
		return L.Threshold + 1
	}
	return limit
}

// capped passes r until it has passed limit() bytes, then stops the
// command and ends; limit is asked once the output passes after bytes
// (an output that small needs no room), and < 0 is no limit.
type capped struct {
	r       io.Reader
	after   int64
	limit   func() int64
	lim     int64
	decided bool
	read    int64
	stop    func()
	stopped bool
}

func (c *capped) Read(b []byte) (int, error) {
	if c.stopped {
		return 0, io.EOF
	}
	n, err := c.r.Read(b)
	if !c.decided && c.read+int64(n) > c.after {
		c.lim, c.decided = c.limit(), true
	}
	if c.decided && c.lim >= 0 && c.read+int64(n) > c.lim {
		n, c.stopped = int(c.lim-c.read), true
		c.read = c.lim
		c.stop()
		return n, nil
	}
	c.read += int64(n)
	return n, err
}

// pickCall picks a call id that names no value of the run: "x" and five
// letters or digits, easy to read back and to type.
func pickCall(s *retain.Store, o Options) (string, error) {
	gen := o.NewCall
	if gen == nil {
		gen = randomCall
	}
	for range 100 {
		c := gen()
		if _, err := retain.Sanitize(c); err != nil {
			return "", err
		}
		if !s.Taken(o.Retain.Run, c) && !s.Taken(o.Retain.Run, c+StderrSuffix) {
			return c, nil
		}
	}
	return "", fmt.Errorf("could not find an unused call id in run %q: give one with --call", o.Retain.Run)
}

// callAlphabet leaves out the letters and digits read as one another
// (l and 1, o and 0).
const callAlphabet = "abcdefghijkmnpqrstuvwxyz23456789"

func randomCall() string {
	var b [5]byte
	rand.Read(b[:])
	id := []byte{'x'}
	for _, c := range b {
		id = append(id, callAlphabet[int(c)%len(callAlphabet)])
	}
	return string(id)
}
