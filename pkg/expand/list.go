package expand

import (
	"bytes"
	"strconv"
	"time"

	"github.com/retval/retval/internal/jsonstr"
	"github.com/retval/retval/pkg/retain"
)

// A model lists a run with {"$list_results": N}: a page of the catalogue
// that starts at value N (0 first, then the "next" of the page before),
//
//	{"run": R, "page": N, "total": T, "next": M|null, "values": [entry, ...]}
//
// with compact entries (id, tool, size, lines, complete, created, sha256),
// as many as fit the per-lookup bound after JSON escaping and at most
// retain.DefaultPageSize. "next" is the value after the last one shown,
// null at the end, so paging by "next" shows every value exactly once. A
// lookup never passes its bound: when not even one entry fits, the lookup
// fails too_large, saying to raise the bound.

// listEntry is a value as a $list_results page shows it.
type listEntry struct {
	ID       retain.ID `json:"id"`
	Tool     string    `json:"tool,omitempty"`
	Size     int64     `json:"size"`
	Lines    int64     `json:"lines"`
	Complete bool      `json:"complete"`
	Created  time.Time `json:"created"`
	SHA256   string    `json:"sha256"`
}

// list answers {"$list_results": from} within limit bytes after JSON
// escaping (0: no limit).
func (rs *Resolver) list(from, limit int64) ([]byte, error) {
	vals, err := rs.Store.Values(rs.Run)
	if err != nil {
		return nil, err
	}
	run, err := retain.Sanitize(rs.Run)
	if err != nil {
		return nil, retain.Errorf(retain.CodeUsage, "run id: %v", err)
	}
	total := int64(len(vals))
	start := min(from, total)
	end := min(start+retain.DefaultPageSize, total)
	entries := make([][]byte, 0, end-start)
	for _, d := range vals[start:end] {
		b, err := jsonstr.Marshal(listEntry{ID: d.ID, Tool: d.Tool, Size: d.Size, Lines: d.Lines, Complete: d.Complete, Created: d.Created, SHA256: d.SHA256})
		if err != nil {
			return nil, err
		}
		entries = append(entries, b)
	}
	// The longest page that fits: the shortest is tried last.
	for k := len(entries); k >= 0; k-- {
		page := listPage(run, from, total, start+int64(k), entries[:k])
		if limit <= 0 || jsonstr.Len(page) <= limit {
			if k == 0 && start < total {
				break
			}
			return page, nil
		}
	}
	if start < total {
		return nil, retain.Errorf(retain.CodeTooLarge, "value %q alone makes a catalogue entry over the %d-byte bound of one lookup (after JSON escaping), so no page starting at %d fits; raise --max-lookup-bytes, or list it with: retval catalogue --run %s --page %d --page-size 1", vals[start].ID, limit, from, run, start)
	}
	return nil, retain.Errorf(retain.CodeTooLarge, "even an empty catalogue page is over the %d-byte bound of one lookup; raise --max-lookup-bytes", limit)
}

// listPage renders a page holding entries, the next of which is value next.
func listPage(run retain.ID, from, total, next int64, entries [][]byte) []byte {
	b := []byte(`{"run":`)
	b = strconv.AppendQuote(b, string(run)) // a clean id: nothing to escape
	b = append(b, `,"page":`...)
	b = strconv.AppendInt(b, from, 10)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, total, 10)
	b = append(b, `,"next":`...)
	if next < total {
		b = strconv.AppendInt(b, next, 10)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"values":[`...)
	b = append(b, bytes.Join(entries, []byte{','})...)
	return append(b, "]}"...)
}
