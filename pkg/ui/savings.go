package ui

import (
	"time"

	"github.com/retval/retval/pkg/config"
	"github.com/retval/retval/pkg/retain"
	"github.com/retval/retval/pkg/stats"
)

// savings is the store's stats: the report of `retval stats --all --json`
// (grouped by tool and by run) and its course over time.
type savings struct {
	Total  *stats.Report `json:"total"`
	ByTool *stats.Report `json:"by_tool"`
	ByRun  *stats.Report `json:"by_run"`
	// RunRows counts the runs of ByRun, of which only the first
	// maxSavingsRows are listed.
	RunRows int           `json:"run_rows"`
	Series  []stats.Point `json:"series"`
}

const maxSavingsRows = 100

// apiStats answers GET /api/stats[?since=DUR]: what `retval stats --all
// --json` says, grouped by tool and by run (most kept out first), and
// over time.
func (s *Server) apiStats(r *request) (any, error) {
	var since time.Duration
	if v := r.query.Get("since"); v != "" {
		d, err := config.ParseDuration(v)
		if err != nil {
			return nil, retain.Errorf(retain.CodeUsage, "since: %v", err)
		}
		since = d
	}
	o := stats.Options{Store: s.o.Store, All: true, Since: since, CallOverhead: s.o.CallOverhead}
	var out savings
	var err error
	if out.Total, err = stats.Compute(o); err != nil {
		return nil, err
	}
	o.By = stats.ByTool
	if out.ByTool, err = stats.Compute(o); err != nil {
		return nil, err
	}
	o.By = stats.ByRun
	if out.ByRun, err = stats.Compute(o); err != nil {
		return nil, err
	}
	out.RunRows = len(out.ByRun.Rows)
	if len(out.ByRun.Rows) > maxSavingsRows {
		out.ByRun.Rows = out.ByRun.Rows[:maxSavingsRows]
	}
	if out.Series, err = stats.Series(o, 200); err != nil {
		return nil, err
	}
	return out, nil
}
