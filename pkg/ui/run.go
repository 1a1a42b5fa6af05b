package ui

import (
	"slices"
	"time"

	"github.com/retval/retval/pkg/retain"
	"github.com/retval/retval/pkg/stats"
)

// runSummary is a run as its page heads it.
type runSummary struct {
	Run          retain.ID         `json:"run"`
	Values       int               `json:"values"`
	Bytes        int64             `json:"bytes"`
	LastActivity time.Time         `json:"last_activity"`
	Active       bool              `json:"active"`
	Status       string            `json:"status,omitempty"`
	Why          string            `json:"why,omitempty"`
	Stats        *stats.Report     `json:"stats"`
	Series       []stats.Point     `json:"series"`
	Now          time.Time         `json:"now"`
	Collected    *retain.Tombstone `json:"collected,omitempty"`
}

// apiRun answers GET /api/runs/{run}: the run's figures, its stats (the
// same as `retval stats --run R --json`) and their course over time, and
// what gc would do with it (once the store has been scanned).
func (s *Server) apiRun(_ *request, run retain.ID) (any, error) {
	st := s.o.Store
	row := s.scanRun(run)
	if row.Run == "" {
		if t, ok := st.ReadTombstone(run); ok {
			return nil, retain.Errorf(retain.CodeCollected, "run %q was collected by gc at %s", run, t.Collected.Format(time.RFC3339))
		}
		return nil, retain.Errorf(retain.CodeUnknownReference, "no run %q in this store", run)
	}
	if row.Refused != "" {
		return nil, retain.Errorf(retain.CodeCorrupt, "%s", row.Refused)
	}
	o := stats.Options{Store: st, Run: string(run), CallOverhead: s.o.CallOverhead}
	rep, err := stats.Compute(o)
	if err != nil {
		return nil, err
	}
	series, err := stats.Series(o, 200)
	if err != nil {
		return nil, err
	}
	sum := runSummary{Run: run, Values: row.Values, Bytes: row.Bytes, LastActivity: row.LastActivity, Active: row.Active,
		Stats: rep, Series: series, Now: st.Clock()}
	if snap, _ := s.runs.current(false, false); snap != nil {
		if i, ok := slices.BinarySearchFunc(snap.rows, run, func(r runRow, id retain.ID) int {
			return cmpID(r.Run, id)
		}); ok {
			sum.Status, sum.Why = snap.rows[i].Status, snap.rows[i].Why
		}
	}
	return sum, nil
}

func cmpID(a, b retain.ID) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// call is one tool call of a run as its timeline shows it: the value the
// result was kept as (or the result passed through), and the reads that
// followed.
type call struct {
	Value retain.ID `json:"value"`
	// Op is what the model was shown: stub (retained), verbatim (passed
	// through), preview (capacity kept it from being retained), or ""
	// for a value the read log does not mention.
	Op        string    `json:"op"`
	Via       string    `json:"via,omitempty"`
	Tool      string    `json:"tool,omitempty"`
	Time      time.Time `json:"time"`
	Size      int64     `json:"size"`
	Lines     int64     `json:"lines"`
	StubBytes int64     `json:"shown_bytes"` // the stub, preview or result shown
	Shown     int       `json:"shown"`       // times shown (retained again)
	Exists    bool      `json:"exists"`      // the run holds the value
	Complete  bool      `json:"complete"`
	Reads     []read    `json:"reads"`
	MoreReads int       `json:"more_reads"` // reads not listed
	ReadBytes int64     `json:"read_bytes"` // bytes all its reads returned
	NReads    int       `json:"n_reads"`
}

// read is one record of the read log under its call.
type read struct {
	Time  time.Time `json:"time"`
	Op    string    `json:"op"`
	Via   string    `json:"via"`
	Sel   string    `json:"sel,omitempty"`
	Step  string    `json:"step,omitempty"`
	Bytes int64     `json:"bytes"`
	Call  bool      `json:"call"`
	Code  string    `json:"code,omitempty"`
}

func readOf(r *retain.Read) read {
	return read{Time: r.Time, Op: string(r.Op), Via: r.Via, Sel: r.Sel, Step: string(r.Step), Bytes: r.Bytes, Call: r.Call, Code: string(r.Code)}
}

// timeline is one page of a run's calls.
type timeline struct {
	Run    retain.ID `json:"run"`
	Total  int       `json:"total"`
	Offset int       `json:"offset"`
	Calls  []call    `json:"calls"`
	// Malformed counts the read log's lines that are not records.
	Malformed int64 `json:"malformed"`
}

const (
	maxTimelinePage = 100
	readsPerCall    = 100
)

// apiTimeline answers GET /api/runs/{run}/timeline?offset=N&limit=K: the
// run's calls in the order the read log has them (values it does not
// mention after them, oldest first), each with the reads of its value
// that followed. One pass over the read log; only the page's calls keep
// their reads, at most readsPerCall each.
func (s *Server) apiTimeline(r *request, run retain.ID) (any, error) {
	offset, limit := r.page(maxTimelinePage)
	st := s.o.Store
	descs, err := st.Values(string(run))
	if err != nil {
		return nil, err
	}
	byID := make(map[retain.ID]*retain.Descriptor, len(descs))
	for i := range descs {
		byID[descs[i].ID] = &descs[i]
	}
	var calls []call
	index := map[retain.ID]int{} // a value's call
	inPage := func(i int) bool { return i >= offset && i < offset+limit }
	info, err := st.ScanReads(run, func(rec *retain.Read) {
		switch rec.Op {
		case retain.OpStub, retain.OpVerbatim, retain.OpPreview:
			if i, ok := index[rec.Value]; ok && rec.Value != "" {
				c := &calls[i]
				switch c.Op {
				case string(rec.Op):
					c.Shown++
					return
				case "":
					// Its reads came first (records of the same instant,
					// listed in another order on object storage).
					c.Op, c.Via, c.Tool, c.Size, c.StubBytes, c.Shown = string(rec.Op), rec.Via, rec.Tool, rec.Size, rec.Bytes, 1
					return
				}
			}
			index[rec.Value] = len(calls)
			calls = append(calls, call{Value: rec.Value, Op: string(rec.Op), Via: rec.Via, Tool: rec.Tool, Time: rec.Time,
				Size: rec.Size, StubBytes: rec.Bytes, Shown: 1})
			return
		}
		i, ok := index[rec.Value]
		if !ok {
			// A read of a value the log never showed (retained before the
			// log was kept), or a listing (no value): a call of its own.
			i = len(calls)
			index[rec.Value] = i
			calls = append(calls, call{Value: rec.Value, Time: rec.Time})
		}
		c := &calls[i]
		c.NReads++
		c.ReadBytes += rec.Bytes
		if !inPage(i) {
			return
		}
		if len(c.Reads) < readsPerCall {
			c.Reads = append(c.Reads, readOf(rec))
		} else {
			c.MoreReads++
		}
	})
	if err != nil {
		return nil, err
	}
	// Values the log does not mention, oldest first.
	for i := range descs {
		if _, ok := index[descs[i].ID]; !ok {
			index[descs[i].ID] = len(calls)
			calls = append(calls, call{Value: descs[i].ID, Time: descs[i].Created, Size: descs[i].Size})
		}
	}
	tl := timeline{Run: run, Total: len(calls), Offset: offset, Calls: []call{}, Malformed: info.Malformed}
	if offset < len(calls) {
		tl.Calls = calls[offset:min(offset+limit, len(calls))]
	}
	for i := range tl.Calls {
		c := &tl.Calls[i]
		if d := byID[c.Value]; d != nil && c.Op != string(retain.OpVerbatim) {
			c.Exists, c.Lines, c.Complete, c.Size = true, d.Lines, d.Complete, d.Size
			if c.Tool == "" {
				c.Tool = d.Tool
			}
		}
		if c.Reads == nil {
			c.Reads = []read{}
		}
	}
	return tl, nil
}
