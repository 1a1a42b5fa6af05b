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
	// Stdin is passed to the command (nil: no input).
	Stdin io.Reader
	// Out receives stdout (merged: both streams) when it is small enough
	// to be shown as it is; a retained output's stub is in the Result.
	Out io.Writer
	// ErrOut is Out for stderr, with Separate (nil: discarded).
	ErrOut io.Writer
	// Timeout > 0 kills the command's whole process group after that long.
	Timeout time.Duration
	// Tail > 0 keeps only the last Tail bytes of each stream, as a test
	// runner does: the value is then partial, with the exact number of
	// bytes discarded. The tail is held in memory, so Tail is at most
	// the max value size. Without Tail, an output that passes the max
	// value size stops the command, and the value is its first bytes.
	Tail int64
	// Stderr is Merged ("" too) or Separate.
	Stderr StderrMode
	// Signals are forwarded to the command's process group as they come
	// (the CLI passes SIGINT and SIGTERM); the output so far is kept.
	Signals <-chan os.Signal
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
}

func usage(format string, args ...any) error { return retain.Errorf(retain.CodeUsage, format, args...) }

// Run runs o.Args and retains its output in s. When the command cannot be
// started, the error says it did not run, and there is no Result. Once
// it has run, the Result is always returned, with its Status, even when
// retaining failed (the error then says why).
func Run(s *retain.Store, o Options) (*Result, error) {
	if len(o.Args) == 0 || o.Args[0] == "" {
		return nil, usage("no command given: put it after --, as in retval exec -- go test ./...")
	}
	if o.Off {
		return passThrough(o)
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

	p, err := start(o)
	if err != nil {
		return nil, err
	}
	go p.watch(o.Timeout, o.Signals)
	res := &Result{Call: call}
	streams := []*stream{{r: p.stdout, out: o.Out, call: call}}
	if p.stderr != nil {
		errOut := o.ErrOut
		if errOut == nil {
			errOut = io.Discard
		}
		st := &stream{r: p.stderr, out: errOut, call: call + StderrSuffix, done: make(chan struct{})}
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
			st.res, st.err = p.retain(s, o, L, st)
			if st.done != nil {
				close(st.done)
			}
		})
	}
	wg.Wait()
	p.wait()
	res.Status, res.TimedOut, res.Stopped = p.status, p.timedOut, p.stopped
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

// passThrough runs the command with its output going straight to Out.
func passThrough(o Options) (*Result, error) {
	out := o.Out
	if out == nil {
		out = io.Discard
	}
	p, err := start(o)
	if err != nil {
		return nil, err
	}
	go p.watch(o.Timeout, o.Signals)
	pipes := []struct {
		r *os.File
		w io.Writer
	}{{p.stdout, out}}
	if p.stderr != nil {
		pipes = append(pipes, struct {
			r *os.File
			w io.Writer
		}{p.stderr, o.ErrOut})
	}
	var wg sync.WaitGroup
	var errs [2]error
	for i, c := range pipes {
		wg.Go(func() {
			defer c.r.Close()
			if c.w == nil {
				c.w = io.Discard
			}
			_, errs[i] = io.Copy(c.w, c.r)
		})
	}
	wg.Wait()
	p.wait()
	return &Result{Status: p.status, TimedOut: p.timedOut}, errors.Join(errs[:]...)
}

// stream is one of the command's output pipes on its way to the store.
type stream struct {
	r    *os.File
	out  io.Writer
	call string
	res  *retain.Result
	err  error
	// done is closed once res and err are set (the stderr stream's).
	done chan struct{}
	// stderr, for stdout beside a separate stderr, waits for the stderr
	// value and returns its id ("" when it was not retained).
	stderr func() retain.ID
}

// proc is the running command.
type proc struct {
	cmd            *exec.Cmd
	stdout, stderr *os.File // the read ends of its pipes

	once     sync.Once
	done     chan struct{} // closed once it has been waited for
	mu       sync.Mutex
	timedOut bool
	stopped  bool
	status   int
}

// start starts the command in a process group of its own, so that a
// timeout or a forwarded signal reaches everything it started.
func start(o Options) (*proc, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	p := &proc{stdout: outR, done: make(chan struct{})}
	closeAll := []*os.File{outW}
	cmd := exec.Command(o.Args[0], o.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = o.Stdin, outW, outW
	if o.Stderr == Separate {
		errR, errW, err := os.Pipe()
		if err != nil {
			outR.Close()
			outW.Close()
			return nil, err
		}
		p.stderr, cmd.Stderr = errR, errW
		closeAll = append(closeAll, errW)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Stdin that is not a file is copied in by a goroutine, which may sit
	// in a read after the command is gone: do not wait for it long.
	cmd.WaitDelay = time.Second
	p.cmd = cmd
	err = cmd.Start()
	for _, f := range closeAll {
		f.Close() // the command holds its own copies
	}
	if err != nil {
		outR.Close()
		if p.stderr != nil {
			p.stderr.Close()
		}
		return nil, usage("cannot run %q: %v; the command did not run", o.Args[0], unwrapExec(err))
	}
	return p, nil
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

// kill sends sig to the command's process group.
func (p *proc) kill(sig syscall.Signal) {
	syscall.Kill(-p.cmd.Process.Pid, sig)
}

// watch stops the command at its timeout and forwards signals, until it
// has been waited for.
func (p *proc) watch(timeout time.Duration, signals <-chan os.Signal) {
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	for {
		select {
		case <-p.done:
			return
		case <-expired:
			p.mu.Lock()
			p.timedOut = true
			p.mu.Unlock()
			p.kill(syscall.SIGKILL)
		case sig := <-signals:
			if s, ok := sig.(syscall.Signal); ok {
				p.kill(s)
			}
		}
	}
}

// stop stops the command because its output passed the max value size.
func (p *proc) stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	p.kill(syscall.SIGKILL)
}

// wait waits for the command (once) and sets its status.
func (p *proc) wait() {
	p.once.Do(func() {
		p.cmd.Wait()
		p.mu.Lock()
		defer p.mu.Unlock()
		ws, _ := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
		switch {
		case p.timedOut:
			p.status = StatusTimedOut
		case ws.Signaled():
			p.status = 128 + int(ws.Signal())
		default:
			p.status = ws.ExitStatus()
		}
		close(p.done)
	})
}

// meta is what the descriptor records once the command is done.
func (p *proc) meta(base retain.Meta, stopped bool) retain.Meta {
	p.wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	m := base
	status := p.status
	m.ExitCode, m.TimedOut, m.Stopped = &status, p.timedOut, stopped
	return m
}

// retain streams one pipe into the store: as it comes, stopping the
// command at the max value size; or with Tail, keeping the last bytes and
// retaining them once the command is done.
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
		n, err := io.Copy(t, st.r)
		if err != nil {
			return nil, fmt.Errorf("reading the command's output: %w", err)
		}
		m := withStderr(p.meta(base, false))
		if omitted := n - t.Len(); omitted > 0 {
			m.Partial, m.OmittedBytes = true, &omitted
		}
		ro.Meta = m
		return s.Retain(t.Reader(), st.out, ro)
	}
	in := io.Reader(st.r)
	c := &capped{r: st.r, left: -1, stop: p.stop}
	if L.MaxValueSize > 0 {
		c.left = L.MaxValueSize
		in = c
	}
	ro.Finish = func() retain.Meta { return withStderr(p.meta(base, c.stopped)) }
	res, err := s.Retain(in, st.out, ro)
	if err != nil {
		// The command may still be writing: unblock it, it is not read.
		st.r.Close()
	}
	return res, err
}

// capped passes at most left bytes of r, then stops the command and ends;
// left < 0 is no limit.
type capped struct {
	r       io.Reader
	left    int64
	stop    func()
	stopped bool
}

func (c *capped) Read(b []byte) (int, error) {
	if c.stopped {
		return 0, io.EOF
	}
	n, err := c.r.Read(b)
	if c.left >= 0 && int64(n) > c.left {
		n, c.stopped = int(c.left), true
		c.left = 0
		c.stop()
		return n, nil
	}
	if c.left >= 0 {
		c.left -= int64(n)
	}
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
