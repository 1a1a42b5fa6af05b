// Package stats sums the read logs of a store (see pkg/retain's ReadOp and
// docs/design.md) into an efficiency ledger: what retention kept out of a
// model's context, and what it cost to read back.
//
// For each group of records it counts the values retained and their bytes,
// the stubs shown instead, the lookups (calls, bytes returned, failures,
// refused calls), the per-call overhead of every call the model made, the
// verbatim results, the capacity previews, expand's composed bytes, the
// references agents' integrations expanded (output the model did not
// generate), and the net:
//
//	kept out = retained − stubs − lookups − overhead
//
// Byte figures are exact counts of what retval printed. Token figures are
// estimates (bytes ÷ 4, labelled so): no tokenizer is run, and billed
// tokens are never claimed. See docs/EFFICIENCY.md for what the ledger
// cannot know.
package stats

import (
	"cmp"
	"errors"
	"slices"
	"time"

	"github.com/retval/retval/pkg/retain"
)

// DefaultCallOverhead is the bytes a model pays for one tool call around
// the bytes the call returns: the call it writes (tool name, call id, the
// arguments' JSON) and the envelope of the result (its call id, type,
// framing), in the model API's JSON. A Claude Code Bash `retval peek` of
// the end-to-end session is 337 bytes of it, a Codex MCP retval_peek 276;
// docs/EFFICIENCY.md derives both.
const DefaultCallOverhead = 300

// TokenMethod names how token figures are estimated.
const TokenMethod = "bytes/4"

// By says how a report is grouped.
type By string

const (
	ByNone  By = ""
	ByTool  By = "tool"  // the tool that produced the value
	ByRun   By = "run"   // the run
	ByValue By = "value" // the value (run/value with All)
)

// Options say what to sum. The zero CallOverhead is DefaultCallOverhead;
// a negative one counts no overhead.
type Options struct {
	Store *retain.Store
	// Run is the run to sum, unless All.
	Run string
	All bool
	// Since: only records at most this old (by the store's clock); 0 all.
	Since time.Duration
	By    By
	// CallOverhead is the bytes counted for each call the model made.
	CallOverhead int64
}

// Ledger is the sums of a group of records.
type Ledger struct {
	// Key names the group (a tool, a run, a value) in a grouped report.
	Key string `json:"key,omitempty"`
	// Values retained and shown as stubs, their bytes, the stubs' bytes.
	Values        int64 `json:"values"`
	RetainedBytes int64 `json:"retained_bytes"`
	StubBytes     int64 `json:"stub_bytes"`
	// Calls the model made to read values back, and their lookups: a
	// resolve of several references is one call of several lookups.
	Calls       int64 `json:"calls"`
	Lookups     int64 `json:"lookups"`
	LookupBytes int64 `json:"lookup_bytes"` // every byte returned, error messages included
	Failures    int64 `json:"failures"`     // lookups answered with an error
	Refused     int64 `json:"refused"`      // calls the step budget refused whole
	// OverheadBytes is Calls × the call overhead.
	OverheadBytes int64 `json:"overhead_bytes"`
	// KeptOut = RetainedBytes − StubBytes − LookupBytes − OverheadBytes:
	// bytes kept out of the model's context (negative when reading back
	// cost more than retention saved).
	KeptOut int64 `json:"kept_out_bytes"`
	// Ratio = RetainedBytes ÷ (StubBytes + LookupBytes + OverheadBytes);
	// nil when nothing was spent. It is left out of the JSON, where every
	// number is an exact integer (SPEC §4): machines divide the fields.
	Ratio *float64 `json:"-"`
	// Verbatim results passed through unchanged (the same with or without
	// retval: not part of the net).
	Verbatim      int64 `json:"verbatim"`
	VerbatimBytes int64 `json:"verbatim_bytes"`
	// Previews: results capacity kept retain from storing; their size and
	// the bytes of the preview shown (not part of the net: the rest of
	// such a result was dropped, not kept).
	Previews     int64 `json:"previews"`
	PreviewSize  int64 `json:"preview_value_bytes"`
	PreviewBytes int64 `json:"preview_bytes"`
	// Composed: bytes expand took from values into tool-call arguments,
	// text the model did not have to write.
	Compositions  int64 `json:"compositions"`
	ComposedBytes int64 `json:"composed_bytes"`
	// References: tool calls whose arguments an integration expanded
	// (the agents' hooks, the MCP proxy); the bytes of reference forms the
	// model wrote, the bytes of text they stood for, and the difference:
	// output the model did not have to generate.
	References      int64 `json:"references"`
	ReferenceBytes  int64 `json:"reference_bytes"`
	ReferencedBytes int64 `json:"referenced_bytes"`
	OutputSaved     int64 `json:"output_saved_bytes"`
}

// Cost is what the model was shown for retained values and reading them
// back: stubs, lookups and call overhead.
func (l *Ledger) Cost() int64 { return l.StubBytes + l.LookupBytes + l.OverheadBytes }

// Tokens are estimates of token counts from bytes.
type Tokens struct {
	// Method is how they were estimated: TokenMethod (no tokenizer ran).
	Method   string `json:"method"`
	Estimate bool   `json:"estimate"`
	Retained int64  `json:"retained"`
	Cost     int64  `json:"cost"`
	KeptOut  int64  `json:"kept_out"`
}

// RunProblem is a run whose log could not be read.
type RunProblem struct {
	Run     retain.ID `json:"run"`
	Message string    `json:"message"`
}

// Report is what Compute found.
type Report struct {
	// Run is the run summed, empty with All.
	Run retain.ID `json:"run,omitempty"`
	// Runs counts the runs whose logs were read.
	Runs int `json:"runs"`
	// Since is the window, empty for the whole log.
	Since string `json:"since,omitempty"`
	// CallOverhead is the bytes counted for each call.
	CallOverhead int64  `json:"call_overhead"`
	Total        Ledger `json:"total"`
	// By and Rows: the groups, when grouped, most kept out first.
	By   By       `json:"by,omitempty"`
	Rows []Ledger `json:"rows,omitempty"`
	// Tokens estimates the total's token counts.
	Tokens Tokens `json:"tokens"`
	// Records counts the records summed; Malformed the lines skipped.
	Records   int64 `json:"records"`
	Malformed int64 `json:"malformed"`
	// Refused lists the runs whose logs were refused (not a regular file,
	// over the bound), which are not in the sums.
	Refused []RunProblem `json:"refused_runs,omitempty"`
}

// Compute sums the read log of one run, or (All) of every run of the
// store in one streaming pass: each log is read once, record by record,
// and only the groups asked for are kept in memory. An unknown run is
// retain.ErrNotFound (ErrCollected when gc removed it).
func Compute(o Options) (*Report, error) {
	overhead := o.CallOverhead
	switch {
	case overhead == 0:
		overhead = DefaultCallOverhead
	case overhead < 0:
		overhead = 0
	}
	if o.Store == nil {
		return nil, retain.Errorf(retain.CodeUsage, "stats: no store")
	}
	switch o.By {
	case ByNone, ByTool, ByRun, ByValue:
	default:
		return nil, retain.Errorf(retain.CodeUsage, "cannot group by %q: want tool, run or value", o.By)
	}
	rep := &Report{CallOverhead: overhead, By: o.By}
	var from time.Time
	if o.Since > 0 {
		rep.Since = o.Since.String()
		from = o.Store.Clock().Add(-o.Since)
	}
	var runs []retain.ID
	if o.All {
		ids, err := o.Store.RunIDs()
		if err != nil {
			return nil, err
		}
		runs = ids
	} else {
		id, err := retain.Sanitize(o.Run)
		if err != nil {
			return nil, retain.Errorf(retain.CodeUsage, "run id: %v", err)
		}
		rep.Run = id
		runs = []retain.ID{id}
	}
	s := &summer{rep: rep, from: from, overhead: overhead, groups: map[string]*Ledger{}, tools: map[retain.ID]string{}}
	for _, run := range runs {
		clear(s.tools)
		s.run = run
		info, err := o.Store.ScanReads(run, s.add)
		if o.All && (errors.Is(err, retain.ErrNotFound) || errors.Is(err, retain.ErrCollected)) {
			continue // collected while we read
		}
		if o.All && errors.Is(err, retain.ErrCorrupt) {
			rep.Refused = append(rep.Refused, RunProblem{Run: run, Message: err.Error()})
			continue
		}
		if err != nil {
			return nil, err
		}
		rep.Runs++
		rep.Records += info.Records
		rep.Malformed += info.Malformed
	}
	rep.Total.finish(overhead)
	for _, g := range s.groups {
		g.finish(overhead)
		rep.Rows = append(rep.Rows, *g)
	}
	slices.SortFunc(rep.Rows, func(a, b Ledger) int {
		if c := cmp.Compare(b.KeptOut, a.KeptOut); c != 0 {
			return c
		}
		return cmp.Compare(a.Key, b.Key)
	})
	rep.Tokens = Tokens{Method: TokenMethod, Estimate: true,
		Retained: EstimateTokens(rep.Total.RetainedBytes), Cost: EstimateTokens(rep.Total.Cost()), KeptOut: EstimateTokens(rep.Total.KeptOut)}
	return rep, nil
}

// EstimateTokens is the token estimate of n bytes: n ÷ 4, rounded to the
// nearest (an estimate, not a tokenizer's count).
func EstimateTokens(n int64) int64 {
	if n < 0 {
		return -EstimateTokens(-n)
	}
	return (n + 2) / 4
}

// summer adds records up.
type summer struct {
	rep      *Report
	run      retain.ID
	from     time.Time
	overhead int64
	groups   map[string]*Ledger
	// tools maps the run's values to the tools that made them, from
	// retain's records (kept whatever their time, so a lookup inside the
	// window finds the tool of a value retained before it).
	tools map[retain.ID]string
}

func (s *summer) add(r *retain.Read) {
	switch r.Op {
	case retain.OpStub, retain.OpPreview, retain.OpVerbatim:
		if r.Value != "" {
			s.tools[r.Value] = r.Tool
		}
	}
	if !s.from.IsZero() && r.Time.Before(s.from) {
		return
	}
	s.rep.Total.add(r)
	if s.rep.By == ByNone {
		return
	}
	var key string
	switch s.rep.By {
	case ByTool:
		key = r.Tool
		if r.Op == retain.OpRead || r.Op == retain.OpRefused || r.Op == retain.OpCompose {
			key = s.tools[r.Value]
		}
	case ByRun:
		key = string(s.run)
	case ByValue:
		key = string(r.Value)
		if s.rep.Run == "" {
			key = string(s.run) + "/" + key
		}
	}
	if key == "" || key[len(key)-1] == '/' {
		key += "-"
	}
	g := s.groups[key]
	if g == nil {
		g = &Ledger{Key: key}
		s.groups[key] = g
	}
	g.add(r)
}

func (l *Ledger) add(r *retain.Read) {
	switch r.Op {
	case retain.OpStub:
		l.Values++
		l.RetainedBytes += r.Size
		l.StubBytes += r.Bytes
	case retain.OpVerbatim:
		l.Verbatim++
		l.VerbatimBytes += r.Bytes
	case retain.OpPreview:
		l.Previews++
		l.PreviewSize += r.Size
		l.PreviewBytes += r.Bytes
	case retain.OpRead:
		l.Lookups++
		l.LookupBytes += r.Bytes
		if r.Code != "" {
			l.Failures++
		}
	case retain.OpRefused:
		l.Refused++
		l.LookupBytes += r.Bytes
	case retain.OpCompose:
		l.Compositions++
		l.ComposedBytes += r.Bytes
	case retain.OpReference:
		l.References++
		l.ReferenceBytes += r.Bytes
		l.ReferencedBytes += r.Size
		l.OutputSaved += r.Size - r.Bytes
	}
	if r.Call && (r.Op == retain.OpRead || r.Op == retain.OpRefused) {
		l.Calls++
	}
}

func (l *Ledger) finish(overhead int64) {
	l.OverheadBytes = l.Calls * overhead
	l.KeptOut = l.RetainedBytes - l.Cost()
	if c := l.Cost(); c > 0 {
		r := float64(l.RetainedBytes) / float64(c)
		l.Ratio = &r
	}
}
