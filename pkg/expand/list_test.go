package expand

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/retval/retval/internal/jsonstr"
	"github.com/retval/retval/pkg/retain"
)

// listStore retains n values with call ids as models make them and a long
// MCP tool name.
func listStore(t *testing.T, n int, tool string) *Resolver {
	t.Helper()
	s := retain.Open(t.TempDir())
	lim := retain.Limits{Threshold: retain.Unlimited}
	for i := range n {
		call := fmt.Sprintf("toolu_01A09q90qw90lq9178%05d", i)
		if _, err := s.Retain(strings.NewReader(fmt.Sprintf("result %d\n", i)), io.Discard, retain.RetainOptions{Run: "run-1", Call: call, Limits: lim, Meta: retain.Meta{Tool: tool}}); err != nil {
			t.Fatal(err)
		}
	}
	return &Resolver{Store: s, Run: "run-1"}
}

type listPageJSON struct {
	Run    string `json:"run"`
	Page   int    `json:"page"`
	Total  int    `json:"total"`
	Next   *int   `json:"next"`
	Values []struct {
		ID       string `json:"id"`
		Tool     string `json:"tool"`
		Size     int64  `json:"size"`
		Lines    int64  `json:"lines"`
		Complete bool   `json:"complete"`
		Created  string `json:"created"`
		SHA256   string `json:"sha256"`
	} `json:"values"`
}

// wantPage is the page, from value from, that shows vals[from:to].
func wantPage(t *testing.T, vals []retain.Descriptor, from, to int) []byte {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, `{"run":"run-1","page":%d,"total":%d,"next":`, from, len(vals))
	if to < len(vals) {
		fmt.Fprintf(&b, "%d", to)
	} else {
		b.WriteString("null")
	}
	b.WriteString(`,"values":[`)
	for i, d := range vals[min(from, len(vals)):to] {
		if i > 0 {
			b.WriteByte(',')
		}
		tool, _ := json.Marshal(d.Tool)
		fmt.Fprintf(&b, `{"id":%q,"tool":%s,"size":%d,"lines":%d,"complete":%v,"created":%q,"sha256":%q}`,
			d.ID, tool, d.Size, d.Lines, d.Complete, d.Created.Format(time.RFC3339Nano), d.SHA256)
	}
	b.WriteString("]}")
	return []byte(b.String())
}

// listAll pages through the run by "next", one lookup per page, each in a
// step of its own, and checks each page: within the bound after JSON
// escaping, as many entries as fit (one more would pass the bound, or the
// page holds 20), "next" right after the last. It returns how many values
// each page showed; every value is shown exactly once, in order.
func listAll(t *testing.T, rs *Resolver, b Budget, vals []retain.Descriptor) (counts []int) {
	t.Helper()
	bound := b.LookupBytes
	if bound == 0 {
		bound = 8 << 10 // SPEC's default
	}
	seen := 0
	for from := 0; ; {
		ans, err := rs.Lookups(lookups(t, fmt.Sprintf(`{"$list_results": %d}`, from)), b, &Spent{})
		if err != nil || ans[0].Err != nil {
			t.Fatalf("from %d: %v, %v", from, err, ans[0].Err)
		}
		text := ans[0].Text
		if n := jsonstr.Len(text); n > bound {
			t.Fatalf("from %d: %d bytes after JSON escaping, over %d", from, n, bound)
		}
		var p listPageJSON
		if err := json.Unmarshal(text, &p); err != nil {
			t.Fatalf("from %d: %v: %s", from, err, text)
		}
		k := len(p.Values)
		if k == 0 && from < len(vals) || k > retain.DefaultPageSize {
			t.Fatalf("from %d: %d values", from, k)
		}
		if want := wantPage(t, vals, from, from+k); string(text) != string(want) {
			t.Fatalf("from %d:\n got %s\nwant %s", from, text, want)
		}
		if k < retain.DefaultPageSize && from+k < len(vals) {
			if more := wantPage(t, vals, from, from+k+1); jsonstr.Len(more) <= bound {
				t.Fatalf("from %d: %d values shown, but %d fit in %d bytes", from, k, k+1, bound)
			}
		}
		seen += k
		counts = append(counts, k)
		if p.Next == nil {
			if seen != len(vals) {
				t.Fatalf("the last page ends after %d of %d values", seen, len(vals))
			}
			return counts
		}
		from = *p.Next
	}
}

// A page of $list_results holds as many compact entries as fit the
// per-lookup bound after JSON escaping, and "next" continues exactly after
// the last one: paging shows every value once, whatever the bound.
func TestListResultsFitsTheBound(t *testing.T) {
	const mcpTool = "mcp__github-enterprise__search_pull_requests__" // 46 characters
	if len(mcpTool) != 46 {
		t.Fatal(len(mcpTool))
	}
	rs := listStore(t, 25, mcpTool)
	vals, err := rs.Store.Values("run-1")
	if err != nil || len(vals) != 25 {
		t.Fatal(len(vals), err)
	}
	// The default bound, 8 KiB: whole pages (20 + 5).
	if n := listAll(t, rs, Budget{}, vals); len(n) != 2 || n[0] != 20 {
		t.Errorf("pages of %v at the default bound; want [20 5]", n)
	}
	// A lower bound makes smaller pages, never a lookup over it.
	for _, bound := range []int64{600, 1000, 2500} {
		listAll(t, rs, Budget{LookupBytes: bound}, vals)
	}
	// Tool names that escape twice over (once in the page, once in the
	// JSON string that carries it) are measured escaped.
	quoted := listStore(t, 25, strings.Repeat(`"\`, 23))
	qvals, _ := quoted.Store.Values("run-1")
	listAll(t, quoted, Budget{}, qvals)
	// 20 of them are 5,766 bytes, 8,058 after JSON escaping: under a bound
	// of 7,000 a page holds fewer.
	if n := listAll(t, quoted, Budget{LookupBytes: 7000}, qvals); n[0] >= 20 {
		t.Errorf("pages of %v: entries with escaped tool names must be measured escaped", n)
	}
	// Past the end: an empty page, next null.
	ans, _ := rs.Lookups(lookups(t, `{"$list_results": 25}`, `{"$list_results": 99}`), Budget{}, &Spent{})
	for _, a := range ans {
		var p listPageJSON
		if a.Err != nil || json.Unmarshal(a.Text, &p) != nil || p.Next != nil || len(p.Values) != 0 || p.Total != 25 {
			t.Fatalf("%s, %v", a.Text, a.Err)
		}
	}
	// Not one entry fits: too_large, saying what to do; the lookup counts.
	var sp Spent
	ans, _ = rs.Lookups(lookups(t, `{"$list_results": 3}`), Budget{LookupBytes: 200}, &sp)
	if retain.CodeOf(ans[0].Err) != retain.CodeTooLarge || sp.Lookups != 1 ||
		!strings.Contains(ans[0].Err.Error(), "so no page starting at 3 fits; raise --max-lookup-bytes, or list it with: retval catalogue --run run-1 --page 3 --page-size 1") {
		t.Fatal(ans[0].Err, sp)
	}
}
