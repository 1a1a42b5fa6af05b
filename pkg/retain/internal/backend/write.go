package backend

import (
	"fmt"
	"os"
	"time"

	"github.com/retval/retval/pkg/retain/internal/format"
)

// ValueWrite is a backend's side of one retain: its hold on the run
// while the value streams in, where the content is spooled, and how the
// value is committed.
type ValueWrite interface {
	// Old is the call's descriptor when the retain began, nil if none.
	Old() *format.Descriptor
	// Spool creates the temporary file the content streams into, and
	// start, when not nil, is how what was written of it is pushed to
	// the disk as it goes.
	Spool() (f *os.File, start func(f *os.File, off, n int64), err error)
	// Commit makes the value exist.
	Commit(c *CommitReq) CommitResult
	// Close lets the run go.
	Close()
}

// CommitReq is what a backend's commit is given: a value streamed in to
// its end, and the store's rules for it.
type CommitReq struct {
	Run, ID format.ID
	Desc    *format.Descriptor // to commit: the backend sets Created and StoredBytes
	Comp    format.Compression
	Content *os.File // the finished temporary content file, not synced yet
	Stored  int64    // its bytes
	// index is the line index of a value of over IndexMinSize bytes, nil
	// for a smaller one.
	Index  []byte
	Limits RunLimits
	Now    func() time.Time
	// verify checks the value the call holds as verify does, committed
	// the one rule over its run (a value retained again is checked
	// before it is taken as it is).
	Verify func(committed func(format.ID) (*format.Descriptor, *format.ValueProblem), hasIndex bool) []format.Problem
}

// RunLimits are the limits a commit applies (0: none).
type RunLimits struct {
	MaxValueSize, MaxRunValues, MaxRunBytes int64
}

// CommitResult is what a commit did: one of value, conflict, full,
// failed and err is set.
type CommitResult struct {
	// value is the value committed, or the same bytes found under the
	// call and checked: the stub names it.
	Value *format.Descriptor
	// conflict is the call's value, of other bytes.
	Conflict *format.Descriptor
	// Full says why the run cannot take the value (its limits).
	Full string
	// failed is why the store could not take it: the input goes out
	// verbatim, and no stub names anything.
	Failed error
	// err fails the retain.
	Err error
	// Taken: the content file became the value's, so it is no longer
	// the retain's to remove.
	Taken bool
}

// Full says why a run holding n committed values of total bytes cannot
// take the value, or "" when it can.
func (c *CommitReq) Full(n, total int64) string {
	L := c.Limits
	switch {
	case L.MaxRunValues > 0 && n+1 > L.MaxRunValues:
		return fmt.Sprintf("run %s holds %d values, max-run-values is %d", c.Run, n, L.MaxRunValues)
	case L.MaxRunBytes > 0 && total+c.Desc.Size > L.MaxRunBytes:
		return fmt.Sprintf("run %s would hold %d bytes, max-run-bytes is %d", c.Run, total+c.Desc.Size, L.MaxRunBytes)
	}
	return ""
}

// RestoredDescriptor is the descriptor of old once its content is this
// retain's (stored bytes in c.comp), and its bytes; changed is false when
// Old already describes that content and needs no new descriptor.
func (c *CommitReq) RestoredDescriptor(old *format.Descriptor) (d format.Descriptor, body []byte, changed bool, err error) {
	d = *old
	if c.Comp == old.Compression && c.Stored == old.StoredBytes {
		return d, nil, false, nil
	}
	d.Compression, d.StoredBytes = c.Comp, c.Stored
	body, err = format.MarshalDescriptor(&d)
	return d, body, err == nil, err
}
