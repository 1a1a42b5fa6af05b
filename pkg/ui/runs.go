package ui

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retval/retval/pkg/gc"
	"github.com/retval/retval/pkg/retain"
	"github.com/retval/retval/pkg/stats"
)

// The runs list. A store may hold 100,000 runs, and scanning each (its
// directory, its descriptors, its read log) takes seconds: the first page
// must not wait for that. So the list is served from an index of every
// run, built by one scan in the background when first asked for and again
// when asked to refresh; until the first scan ends, pages are served in
// run-id order from the store's list of runs, scanning only the runs of
// the page, and say that a scan is under way. No page ever lists more
// than its rows.

// runRow is one run as the list shows it.
type runRow struct {
	Run          retain.ID `json:"run"`
	Values       int       `json:"values"`
	Bytes        int64     `json:"bytes"` // on disk (du -sb)
	LastActivity time.Time `json:"last_activity"`
	Active       bool      `json:"active"`
	// Retained, Shown and Lookups are the read log's figures: bytes of
	// the values retained, bytes the model was shown for them (stubs and
	// lookups), and lookups.
	Retained int64 `json:"retained_bytes"`
	Shown    int64 `json:"shown_bytes"`
	Lookups  int64 `json:"lookups"`
	KeptOut  int64 `json:"kept_out_bytes"`
	// Status is live, idle or collect (gc would remove the run now), or
	// "" while gc's plan is not known; Why says why.
	Status string `json:"status"`
	Why    string `json:"why,omitempty"`
	// Refused says why the run could not be looked into.
	Refused string `json:"refused,omitempty"`
}

// runsSnap is one scan of every run.
type runsSnap struct {
	built time.Time // by the store's clock
	rows  []runRow  // by run id
	err   string    // what stopped part of the scan (gc's plan, stats)
}

// runsIndex holds the last scan and the one under way.
type runsIndex struct {
	s       *Server
	mu      sync.Mutex
	snap    *runsSnap
	running chan struct{} // closed when the scan under way ends; nil: none
	done    atomic.Int64  // runs scanned by the scan under way
	total   atomic.Int64  // of these
}

// current returns the last complete scan (nil before the first), and the
// channel of the scan under way (nil when none), starting one when start
// and there is no scan yet, or when refresh asks for a new one.
func (x *runsIndex) current(start, refresh bool) (*runsSnap, chan struct{}) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.running == nil && (x.snap == nil && start || refresh) {
		x.s.closeMu.Lock()
		closed := x.s.closed
		if !closed {
			x.s.scanning.Add(1)
		}
		x.s.closeMu.Unlock()
		if !closed {
			ch := make(chan struct{})
			x.running = ch
			x.done.Store(0)
			x.total.Store(0)
			go x.scan(ch)
		}
	}
	return x.snap, x.running
}

func (x *runsIndex) scan(ch chan struct{}) {
	defer x.s.scanning.Done()
	snap := x.build()
	x.mu.Lock()
	x.snap, x.running = snap, nil
	x.mu.Unlock()
	close(ch)
}

// build scans every run: its directory, then every read log in one pass
// (stats by run), then gc's plan.
func (x *runsIndex) build() *runsSnap {
	if x.s.beforeScan != nil {
		x.s.beforeScan()
	}
	st := x.s.o.Store
	snap := &runsSnap{built: st.Clock()}
	ids, err := st.RunIDs()
	if err != nil {
		snap.err = err.Error()
		return snap
	}
	x.total.Store(int64(len(ids)))
	rows := make([]runRow, len(ids))
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(len(ids)) || x.stopped() {
					return
				}
				rows[i] = x.s.scanRun(ids[i])
				x.done.Add(1)
			}
		}()
	}
	wg.Wait()
	if x.stopped() {
		snap.err = "stopped"
		return snap
	}
	rows = slices.DeleteFunc(rows, func(r runRow) bool { return r.Run == "" })
	var problems []string
	if rep, err := stats.Compute(stats.Options{Store: st, All: true, By: stats.ByRun, CallOverhead: x.s.o.CallOverhead}); err != nil {
		problems = append(problems, "stats: "+err.Error())
	} else {
		byRun := make(map[string]*stats.Ledger, len(rep.Rows))
		for i := range rep.Rows {
			byRun[rep.Rows[i].Key] = &rep.Rows[i]
		}
		for i := range rows {
			if l := byRun[string(rows[i].Run)]; l != nil {
				setLedger(&rows[i], l)
			}
		}
	}
	if plan, err := gc.MakePlan(st, x.s.gcOptions()); err != nil {
		problems = append(problems, "gc plan: "+err.Error())
	} else {
		x.s.applyPlan(rows, plan)
	}
	snap.rows, snap.err = rows, strings.Join(problems, "; ")
	return snap
}

// stopped reports whether the server was closed.
func (x *runsIndex) stopped() bool {
	select {
	case <-x.s.stop:
		return true
	default:
		return false
	}
}

// scanRun is one run's row without the read log's figures and gc's
// status; a run collected meanwhile is the zero row.
func (s *Server) scanRun(id retain.ID) runRow {
	st := s.o.Store
	ri, err := st.ScanRun(id)
	if errors.Is(err, retain.ErrNotFound) || errors.Is(err, retain.ErrCollected) {
		return runRow{}
	}
	if err != nil {
		return runRow{Run: id, Refused: err.Error()}
	}
	busy, _ := st.RunBusy(id)
	grace := s.gcOptions().Grace
	if grace < 0 {
		grace = 0
	}
	return runRow{Run: id, Values: ri.Values, Bytes: ri.Bytes, LastActivity: ri.LastActivity,
		Active: busy || st.Clock().Sub(ri.LastActivity) < grace}
}

func setLedger(r *runRow, l *stats.Ledger) {
	r.Retained, r.Shown, r.Lookups, r.KeptOut = l.RetainedBytes, l.StubBytes+l.LookupBytes, l.Lookups, l.KeptOut
}

// gcOptions is the policy with its defaults written out, as a dry run of
// gc applies it.
func (s *Server) gcOptions() gc.Options {
	o := s.o.GC
	d := gc.Defaults()
	if o.MaxAge == 0 {
		o.MaxAge = d.MaxAge
	}
	if o.Grace == 0 {
		o.Grace = d.Grace
	}
	o.DryRun = true
	return o
}

// applyPlan sets each row's status from gc's plan.
func (s *Server) applyPlan(rows []runRow, p *gc.Plan) {
	remove := make(map[retain.ID]gc.Removal, len(p.Remove))
	for _, r := range p.Remove {
		remove[r.Run] = r
	}
	skip := make(map[retain.ID]gc.Skip, len(p.Skip))
	for _, k := range p.Skip {
		if k.Rule != gc.RuleDebris {
			skip[k.Run] = k
		}
	}
	o := s.gcOptions()
	for i := range rows {
		r := &rows[i]
		if r.Refused != "" {
			r.Status, r.Why = "refused", r.Refused
			continue
		}
		idle := p.Now.Sub(r.LastActivity)
		if rm, ok := remove[r.Run]; ok {
			r.Status = "collect"
			switch rm.Rule {
			case gc.RuleMaxAge:
				r.Why = "idle " + gc.Age(idle) + ", past max-age " + gc.Age(o.MaxAge) + ": gc would collect it now"
			case gc.RuleMaxBytes:
				r.Why = "the store is over max-bytes " + strconv.FormatInt(o.MaxBytes, 10) + " and this is among its oldest runs: gc would collect it now"
			case gc.RuleKeepRuns:
				r.Why = "the store holds more than keep-runs " + strconv.Itoa(o.KeepRuns) + " runs and this is among its oldest: gc would collect it now"
			default:
				r.Why = "gc would collect it now (" + rm.Rule + ")"
			}
			continue
		}
		if k, ok := skip[r.Run]; ok {
			r.Status, r.Why = "live", k.Message
			continue
		}
		if r.Active {
			r.Status, r.Why = "live", "active within gc's grace "+gc.Age(o.Grace)+": gc leaves it"
			continue
		}
		r.Status = "idle"
		if o.MaxAge > 0 {
			r.Why = "idle " + gc.Age(idle) + "; gc collects it after " + gc.Age(o.MaxAge) + " idle"
		} else {
			r.Why = "idle " + gc.Age(idle) + "; no age rule"
		}
	}
}

// runsPage is one page of the runs list.
type runsPage struct {
	Total  int      `json:"total"` // runs matching the filter
	Offset int      `json:"offset"`
	Sort   string   `json:"sort"`
	Desc   bool     `json:"desc"`
	Rows   []runRow `json:"rows"`
	// Scanning: the first scan of the store is under way (Scanned of
	// Of runs); the page is in run-id order, without gc's status.
	Scanning bool      `json:"scanning"`
	Scanned  int64     `json:"scanned"`
	Of       int64     `json:"of"`
	Built    time.Time `json:"built,omitzero"`
	Problem  string    `json:"problem,omitempty"`
	Policy   string    `json:"policy"`
}

const maxRunsPage = 200

// apiRuns answers GET /api/runs?offset=N&limit=K&sort=KEY&desc=1&q=TEXT
// [&refresh=1][&wait=1]: a page of runs, sorted by run, activity, values,
// bytes, retained, shown, lookups, kept or status, filtered by a text
// its run id or status contains. wait=1 waits for the scan under way.
func (s *Server) apiRuns(r *request) (any, error) {
	q := r.query
	offset, limit := r.page(maxRunsPage)
	key := q.Get("sort")
	if !slices.Contains([]string{"run", "activity", "values", "bytes", "retained", "shown", "lookups", "kept", "status"}, key) {
		key = "activity"
	}
	desc := r.flag("desc")
	filter := strings.ToLower(q.Get("q"))
	wait := r.flag("wait")
	snap, running := s.runs.current(wait, r.flag("refresh"))
	if running != nil && (wait || r.flag("refresh") && snap == nil) {
		select {
		case <-running:
		case <-r.Context().Done():
			return nil, nil
		}
		snap, running = s.runs.current(false, false)
	}
	o := s.gcOptions()
	page := runsPage{Offset: offset, Sort: key, Desc: desc, Rows: []runRow{},
		Policy: "max-age " + ageOrOff(o.MaxAge) + ", grace " + ageOrOff(o.Grace)}
	if o.MaxBytes > 0 {
		page.Policy += ", max-bytes " + strconv.FormatInt(o.MaxBytes, 10)
	}
	if o.KeepRuns > 0 {
		page.Policy += ", keep-runs " + strconv.Itoa(o.KeepRuns)
	}
	if snap == nil {
		// The first page is served before the scan starts, so that the
		// two do not share the machine.
		first, err := s.firstPage(&page, filter, limit)
		answer(r.w, first, err)
		s.runs.current(true, false)
		return nil, nil
	}
	page.Scanning = running != nil
	page.Scanned, page.Of = s.runs.done.Load(), s.runs.total.Load()
	page.Built, page.Problem = snap.built, snap.err
	rows := snap.rows
	if filter != "" {
		rows = slices.DeleteFunc(slices.Clone(rows), func(r runRow) bool {
			return !strings.Contains(strings.ToLower(string(r.Run)), filter) && !strings.Contains(r.Status, filter)
		})
	} else {
		rows = slices.Clone(rows)
	}
	slices.SortStableFunc(rows, func(a, b runRow) int {
		c := compareRuns(key, &a, &b)
		if c == 0 {
			c = cmp.Compare(a.Run, b.Run)
			if desc {
				c = -c
			}
		}
		if desc {
			return -c
		}
		return c
	})
	page.Total = len(rows)
	if offset < len(rows) {
		page.Rows = rows[offset:min(offset+limit, len(rows))]
	}
	return page, nil
}

func compareRuns(key string, a, b *runRow) int {
	switch key {
	case "activity":
		return a.LastActivity.Compare(b.LastActivity)
	case "values":
		return cmp.Compare(a.Values, b.Values)
	case "bytes":
		return cmp.Compare(a.Bytes, b.Bytes)
	case "retained":
		return cmp.Compare(a.Retained, b.Retained)
	case "shown":
		return cmp.Compare(a.Shown, b.Shown)
	case "lookups":
		return cmp.Compare(a.Lookups, b.Lookups)
	case "kept":
		return cmp.Compare(a.KeptOut, b.KeptOut)
	case "status":
		return cmp.Compare(a.Status, b.Status)
	}
	return cmp.Compare(a.Run, b.Run)
}

// firstPage serves a page before the first scan has ended: runs in id
// order from the store's list, each run of the page scanned and its read
// log summed on its own.
func (s *Server) firstPage(page *runsPage, filter string, limit int) (*runsPage, error) {
	page.Scanning, page.Sort, page.Desc = true, "run", false
	page.Scanned, page.Of = s.runs.done.Load(), s.runs.total.Load()
	ids, err := s.o.Store.RunIDs()
	if err != nil {
		return nil, err
	}
	if filter != "" {
		ids = slices.DeleteFunc(ids, func(id retain.ID) bool { return !strings.Contains(strings.ToLower(string(id)), filter) })
	}
	page.Total = len(ids)
	if page.Offset < len(ids) {
		for _, id := range ids[page.Offset:min(page.Offset+limit, len(ids))] {
			row := s.scanRun(id)
			if row.Run == "" {
				continue
			}
			if rep, err := stats.Compute(stats.Options{Store: s.o.Store, Run: string(id), CallOverhead: s.o.CallOverhead}); err == nil {
				setLedger(&row, &rep.Total)
			}
			page.Rows = append(page.Rows, row)
		}
	}
	return page, nil
}

func ageOrOff(d time.Duration) string {
	if d <= 0 {
		return "off"
	}
	return gc.Age(d)
}
