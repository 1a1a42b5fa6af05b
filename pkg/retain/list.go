package retain

import (
	"sort"

	"github.com/retval/retval/internal/jsonstr"
)

// DefaultPageSize is the catalogue's page size when none is given.
const DefaultPageSize = 20

// Values returns the descriptors of run's committed values, oldest first
// (by creation time, then id). Only committed values are listed (the rule
// of committedValue): a descriptor that does not read, or whose content
// file is missing or of the wrong size, is left out (verify reports it).
// The answer is the whole run or ErrCollected, never part of a run gc
// was collecting (in a runs-dir the run's lock is held shared while it
// is read).
func (s *Store) Values(run string) ([]Descriptor, error) {
	rid, err := Sanitize(run)
	if err != nil {
		return nil, Errorf(CodeUsage, "run id: %v", err)
	}
	b, err := s.backend()
	if err != nil {
		return nil, err
	}
	out, err := b.Values(rid)
	if err != nil {
		return nil, asTyped(err, run)
	}
	sortValues(out)
	return out, nil
}

// Page is one page of a run's catalogue: what `retval catalogue --json`
// prints and what {"$list_results": N} returns.
type Page struct {
	Run    ID           `json:"run"`
	Page   int          `json:"page"`
	Total  int          `json:"total"`
	Next   *int         `json:"next"`
	Values []Descriptor `json:"values"`
}

// CataloguePage returns page (from 0) of run's values, size per page
// (DefaultPageSize when size ≤ 0). A page past the end is empty, with a
// nil Next.
func (s *Store) CataloguePage(run string, page, size int) (*Page, error) {
	if page < 0 {
		return nil, Errorf(CodeUsage, "page %d: pages count from 0", page)
	}
	if size <= 0 {
		size = DefaultPageSize
	}
	vals, err := s.Values(run)
	if err != nil {
		return nil, err
	}
	rid, _ := Sanitize(run)
	p := &Page{Run: rid, Page: page, Total: len(vals), Values: []Descriptor{}}
	start := min(page*size, len(vals))
	end := min(start+size, len(vals))
	p.Values = append(p.Values, vals[start:end]...)
	if end < len(vals) {
		n := page + 1
		p.Next = &n
	}
	return p, nil
}

// MarshalPage renders a page as the canonical JSON bytes (one line) that
// `catalogue --json` prints. ($list_results answers compact entries of the
// same page shape, rendered the same way: see pkg/expand.)
func MarshalPage(p *Page) ([]byte, error) { return jsonstr.Marshal(p) }

// sortValues orders descriptors oldest first, then by id.
func sortValues(out []Descriptor) {
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
}
