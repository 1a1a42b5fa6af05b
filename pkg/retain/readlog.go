package retain

import (
	"fmt"
	"strings"
)

// A run's read log, <run>.values/.reads, accounts for every byte retval
// showed a model or a person: one line per record, appended with one
// write(2) to a file opened O_APPEND, so concurrent readers' records never
// interleave. The format is written down in docs/design.md ("The read
// log"); pkg/stats sums it.

// LogRead appends r to run's read log. It never fails the read it
// accounts for: where the run does not exist (a lookup in an unknown run,
// a result passed through before its run holds any value) nothing is
// recorded, and a store that cannot be written here (read-only) is read
// without logging; any other failure goes to the store's OnLogError.
func (s *Store) LogRead(run ID, r Read) {
	if run == "" {
		return
	}
	if err := s.logRead(run, r); err != nil && s.OnLogError != nil {
		s.OnLogError(fmt.Errorf("the read log of run %q was not written, so stats will not count this: %w", run, err))
	}
}

func (s *Store) logRead(run ID, r Read) error {
	if r.Time.IsZero() {
		r.Time = s.now()
	}
	b, err := s.backend()
	if err != nil {
		return nil // a store that cannot be opened: the read said so already
	}
	return b.LogRead(run, r)
}

// ScanReads calls f with each record of run's read log, in the order they
// were written, streaming. A run without a log has no records. A log that
// is a symlink, a FIFO or not a regular file, or that is larger than
// MaxReadLog, is ErrCorrupt (it is never read); lines that are not records
// are counted in the info and skipped. An unknown run is ErrNotFound
// (ErrCollected when gc removed it).
func (s *Store) ScanReads(run ID, f func(*Read)) (ReadLogInfo, error) {
	b, err := s.backend()
	if err != nil {
		return ReadLogInfo{}, err
	}
	return b.ScanReads(run, f)
}

// LogCall records one call the model (or a person) made to read run: a
// peek of value id or a listing (id ""), via a command or tool, that
// returned n bytes or failed with err (whose message is then what was
// returned). Ids that do not sanitize are recorded as nothing.
func (s *Store) LogCall(run, id, via string, n int64, err error) {
	rid, rerr := Sanitize(run)
	if rerr != nil {
		return
	}
	s.LogRead(rid, callRead(id, via, n, err))
}

// callRead is the record of a call that read value id (or listed, id "")
// and returned n bytes or failed with err.
func callRead(id, via string, n int64, err error) Read {
	r := Read{Op: OpRead, Via: via, Bytes: n, Call: true}
	if id != "" {
		r.Value, _ = Sanitize(strings.TrimPrefix(id, "#"))
	}
	if err != nil {
		r.Code, r.Bytes = CodeOf(err), int64(len(err.Error()))
	}
	return r
}
