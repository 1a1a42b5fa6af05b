package expand

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/retval/retval/pkg/retain"
)

func outlineOf(t testing.TB, doc, ref string, o OutlineOptions) (*OutlinePage, error) {
	t.Helper()
	rs := newStore(t, map[string]string{"c": doc})
	v, err := rs.Store.OpenValue("r", "c")
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	return Outline(v, mustRef(t, ref), o)
}

func TestOutlineRFC6901(t *testing.T) {
	pg, err := outlineOf(t, rfcDoc, `{"$ref": "c", "outline": ""}`, OutlineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := `[outline of the whole document: object, 10 members, 175 bytes]
/foo  array  2 elements  14 bytes
/  number  1 byte  0
/a~1b  number  1 byte  1
/c%d  number  1 byte  2
/e^f  number  1 byte  3
/g|h  number  1 byte  4
/i\j  number  1 byte  5
"/k\"l"  number  1 byte  6
"/ "  number  1 byte  7
/m~0n  number  1 byte  8
`
	if pg.Text != want {
		t.Fatalf("outline:\n%s\nwant:\n%s", pg.Text, want)
	}
	pg, err = outlineOf(t, rfcDoc, `{"$ref": "c", "outline": "/foo"}`, OutlineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "[outline of \"/foo\": array, 2 elements, 14 bytes]\n/foo/0  string  5 bytes  \"bar\"\n/foo/1  string  5 bytes  \"baz\"\n"; pg.Text != want {
		t.Fatalf("outline /foo:\n%s\nwant:\n%s", pg.Text, want)
	}
	// Every pointer an outline line shows selects that child.
	rs := newStore(t, map[string]string{"c": rfcDoc})
	for _, line := range strings.Split(strings.TrimSpace(want), "\n")[1:] {
		ptr := line[:strings.Index(line, "  ")]
		if !strings.HasPrefix(ptr, `"`) {
			ptr = fmt.Sprintf("%q", ptr)
		}
		sel, err := rs.Open(mustRef(t, `{"$ref": "c", "pointer": `+ptr+`}`))
		if err != nil {
			t.Errorf("outline pointer %s: %v", ptr, err)
			continue
		}
		sel.Close()
	}
}

func TestOutlineDuplicates(t *testing.T) {
	doc := `{"a": 1, "b": 2, "a": 3, "c": {"x": 1, "x": 2}}`
	pg, err := outlineOf(t, doc, `{"$ref": "c", "outline": ""}`, OutlineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := "[outline of the whole document: object, 4 members, 47 bytes]\n" +
		"/a  number  1 byte  1  duplicate name\n/b  number  1 byte  2\n/a  number  1 byte  3  duplicate name\n/c  object  2 members  16 bytes\n"
	if pg.Text != want {
		t.Fatalf("outline:\n%s\nwant:\n%s", pg.Text, want)
	}
	// A nested object's duplicates show in its own outline; the path to it
	// is not ambiguous.
	pg, err = outlineOf(t, doc, `{"$ref": "c", "outline": "/c"}`, OutlineOptions{})
	if err != nil || !strings.Contains(pg.Text, "/c/x  number  1 byte  2  duplicate name") {
		t.Fatalf("outline /c: %v\n%s", err, pg.Text)
	}
	// Through a duplicated member: ambiguous_json, never a silent pick.
	_, err = outlineOf(t, `{"a": {}, "a": {}}`, `{"$ref": "c", "outline": "/a"}`, OutlineOptions{})
	if retain.CodeOf(err) != retain.CodeAmbiguousJSON {
		t.Fatalf("outline through a duplicate: %v", err)
	}
}

func TestOutlineNotJSON(t *testing.T) {
	for _, doc := range []string{`{"a": 1,}`, `{"a": [1, 2}`, "just text", `{"a": 1} {"b": 2}`} {
		_, err := outlineOf(t, doc, `{"$ref": "c", "outline": ""}`, OutlineOptions{})
		if retain.CodeOf(err) != retain.CodeNotJSON || !strings.Contains(err.Error(), "not one valid JSON document") {
			t.Errorf("%q: %v; want not_json", doc, err)
		}
	}
	// The scanner's own syntax errors (a document it reads directly).
	_, err := findOutline(strings.NewReader(`{"a": [1, 2}`), 0, 12, Pointer{}, outlineOpts(), 64)
	if retain.CodeOf(err) != retain.CodeNotJSON || !strings.Contains(err.Error(), "not valid JSON at byte 11") {
		t.Errorf("syntax error: %v", err)
	}
}

func TestOutlineDeepNesting(t *testing.T) {
	const depth = 200000
	doc := `{"deep": ` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `, "next": true}`
	pg, err := outlineOf(t, doc, `{"$ref": "c", "outline": ""}`, OutlineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("[outline of the whole document: object, 2 members, %d bytes]\n/deep  array  1 element  %d bytes\n/next  boolean  4 bytes  true\n", len(doc), 2*depth)
	if pg.Text != want {
		t.Fatalf("outline:\n%s\nwant:\n%s", pg.Text, want)
	}
	pg, err = outlineOf(t, doc, `{"$ref": "c", "outline": "/deep/0/0/0"}`, OutlineOptions{})
	if err != nil || !strings.HasPrefix(pg.Text, "[outline of \"/deep/0/0/0\": array, 1 element,") {
		t.Fatalf("outline /deep/0/0/0: %v\n%s", err, pg.Text)
	}
}

func outlineOpts() (o struct {
	After      int64
	Head, Tail int
	Preview    int
	MaxName    int64
}) {
	o.After, o.Head, o.Tail = -1, 10, 3
	return o
}

// TestOutlineMillionElements: a million-element array is outlined in one
// pass with memory that does not grow with it: the first elements, the
// last three, the count, and the flag that pages on.
func TestOutlineMillionElements(t *testing.T) {
	const n = 1000000
	var b strings.Builder
	b.WriteString(`{"items": [`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"tags":["a","b"]}`, i)
	}
	b.WriteString(`]}`)
	doc := b.String()
	rs := newStore(t, map[string]string{"c": doc})
	doc = ""
	b = strings.Builder{}
	v, err := rs.Store.OpenValue("r", "c")
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	pg, err := Outline(v, mustRef(t, `{"$ref": "c", "outline": "/items"}`), OutlineOptions{Lines: 10})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 {
		t.Errorf("outlining allocated %d bytes; want a bound independent of the array's size", grew)
	}
	lines := strings.Split(strings.TrimSuffix(pg.Text, "\n"), "\n")
	if len(lines) != 10 || !strings.HasPrefix(lines[0], "[outline of \"/items\": array, 1000000 elements,") ||
		lines[1] != `/items/0  object  2 members  25 bytes` ||
		lines[5] != "[… 999993 elements not shown …]" ||
		lines[7] != `/items/999998  object  2 members  30 bytes` ||
		lines[9] != "[elements 0-3 and 999997-999999 of 1000000; next: --outline /items --after 3]" {
		t.Fatalf("outline:\n%s", pg.Text)
	}
	if pg.Next != 3 || pg.Count != n {
		t.Fatalf("page: %+v", pg)
	}
	// --after pages on from the element after it.
	pg, err = Outline(v, mustRef(t, `{"$ref": "c", "outline": "/items", "after": 999990}`), OutlineOptions{Lines: 20})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(pg.Text, "\n/items/999991  object") || !strings.HasSuffix(pg.Text, "/items/999999  object  2 members  30 bytes\n[elements 999991-999999 of 1000000]\n") {
		t.Fatalf("outline after 999990:\n%s", pg.Text)
	}
}

// TestOutlineNPMLock: a real npm lock file (testdata/samples): the root
// and /packages outlined as encoding/json sees them, and every pointer an
// outline line shows resolves to that member.
func TestOutlineNPMLock(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/samples/package-lock.json")
	if err != nil {
		t.Fatal(err)
	}
	var lock struct {
		Packages map[string]json.RawMessage `json:"packages"`
	}
	if err := json.Unmarshal(raw, &lock); err != nil {
		t.Fatal(err)
	}
	rs := newStore(t, map[string]string{"lock": string(raw)})
	v, err := rs.Store.OpenValue("r", "lock")
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	pg, err := Outline(v, mustRef(t, `{"$ref": "lock", "outline": ""}`), OutlineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("/packages  object  %d members  ", len(lock.Packages)); !strings.Contains(pg.Text, "\n"+want) || !strings.HasPrefix(pg.Text, "[outline of the whole document: object, 5 members, 69712 bytes]\n/name  string  8 bytes  \"sample\"\n") {
		t.Fatalf("root outline:\n%s", pg.Text)
	}
	seen := 0
	for after := int64(-1); ; {
		js := `{"$ref": "lock", "outline": "/packages"}`
		if after >= 0 {
			js = fmt.Sprintf(`{"$ref": "lock", "outline": "/packages", "after": %d}`, after)
		}
		ref := mustRef(t, js)
		pg, err := Outline(v, ref, OutlineOptions{Lines: 60, Bytes: 4096})
		if err != nil {
			t.Fatal(err)
		}
		if pg.Count != int64(len(lock.Packages)) {
			t.Fatalf("count %d, want %d", pg.Count, len(lock.Packages))
		}
		for _, line := range strings.Split(strings.TrimSuffix(pg.Text, "\n"), "\n")[1:] {
			if strings.HasPrefix(line, "[") {
				continue
			}
			ptr := line[:strings.Index(line, "  ")]
			p, err := ParsePointer(ptr)
			if err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			name := p.Tokens()[1]
			sp, err := FindPointer(v, v.Size(), p)
			if err != nil || !bytes.Equal(raw[sp.Start:sp.End], lock.Packages[name]) {
				t.Fatalf("line %q: %v", line, err)
			}
			if want := fmt.Sprintf("  %d bytes", len(lock.Packages[name])); !strings.Contains(line, want) {
				t.Fatalf("line %q: want%s", line, want)
			}
			seen++
		}
		if pg.Next < 0 {
			break
		}
		after = pg.Next
	}
	// Paging visits every member at least once (each page also repeats
	// the last three).
	if seen < len(lock.Packages) {
		t.Fatalf("paged through %d lines for %d members", seen, len(lock.Packages))
	}
}

// TestOutlineDuplicatesPaged: a shown member whose name occurs only
// before the page, or far from the tail it is shown in, is marked too.
func TestOutlineDuplicatesPaged(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"last": 0, "k5": 0`)
	for i := range 5000 {
		fmt.Fprintf(&b, `, "k%d": %d`, i, i)
	}
	b.WriteString(`, "last": 1}`)
	doc := b.String()
	pg, err := outlineOf(t, doc, `{"$ref": "c", "outline": ""}`, OutlineOptions{Lines: 12})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(pg.Text, "\n/last  number  1 byte  0  duplicate name\n/k5  number  1 byte  0  duplicate name\n/k0  number  1 byte  0\n") ||
		!strings.Contains(pg.Text, "\n/k4999  number  4 bytes  4999\n/last  number  1 byte  1  duplicate name\n") {
		t.Fatalf("outline:\n%s", pg.Text)
	}
	pg, err = outlineOf(t, doc, `{"$ref": "c", "outline": "", "after": 5}`, OutlineOptions{Lines: 8})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(pg.Text, "]\n/k4  number  1 byte  4\n/k5  number  1 byte  5  duplicate name\n") {
		t.Fatalf("outline after 5:\n%s", pg.Text)
	}
}

// TestNDJSONLinePointer: a pointer inside one line's document, in expand
// (as a value and as text) and in resolve; offsets stay the value's; an
// outline in a template is refused.
func TestNDJSONLinePointer(t *testing.T) {
	nd := `{"Action":"run","Test":"TestA"}` + "\n" + `{"Action":"output","Test":"TestA","Output":"--- FAIL: TestA\n"}` + "\r\n\n" + `{"Action":"fail","Test":"TestA","Elapsed":0.01}` + "\n"
	x := newExpander(t, map[string]string{"nd": nd})
	out, _ := expandString(t, x, `{"o": {"$ref": "nd", "lines": [2, 2], "pointer": "/Output", "as": "string"}, "e": {"$ref": "nd", "lines": [4, 4], "pointer": "/Elapsed", "as": "value"}}`, false)
	if out != `{"o": "--- FAIL: TestA\n", "e": 0.01}` {
		t.Fatalf("expand: %s", out)
	}
	rs := &Resolver{Store: x.Store, Run: x.Run}
	s, err := rs.Open(mustRef(t, `{"$ref": "nd", "lines": [4, 4], "pointer": "/Action"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if at := int64(strings.Index(nd, `"fail"`)); s.Start != at || s.End != at+6 {
		t.Fatalf("span %d-%d, want %d-%d", s.Start, s.End, at, at+6)
	}
	for ref, code := range map[string]retain.Code{
		`{"$ref": "nd", "lines": [3, 3], "pointer": "/Action"}`: retain.CodeNotJSON, // the empty line
		`{"$ref": "nd", "lines": [9, 9], "pointer": "/Action"}`: retain.CodeInvalidRange,
		`{"$ref": "nd", "pointer": "/Action"}`:                  retain.CodeNotJSON,
	} {
		if _, err := rs.Open(mustRef(t, ref)); retain.CodeOf(err) != code {
			t.Errorf("%s: %v; want %s", ref, err, code)
		}
	}
	out2, err := rs.Lookups([]Lookup{{Ref: mustRef(t, `{"$ref": "nd", "outline": ""}`)}, {Ref: mustRef(t, `{"$ref": "nd", "lines": [4, 4], "outline": ""}`)}}, Budget{}, &Spent{})
	if err != nil || retain.CodeOf(out2[0].Err) != retain.CodeNotJSON || !strings.Contains(out2[0].Err.Error(), "it is NDJSON") ||
		out2[1].Err != nil || !strings.HasPrefix(string(out2[1].Text), "[outline of line 4, the whole document: object, 3 members,") {
		t.Fatalf("outline lookups: %v %+v", err, out2)
	}
	if _, err := x.Expand([]byte(`{"o": {"$ref": "nd", "lines": [1, 1], "outline": ""}}`), false); err == nil || !strings.Contains(err.Error(), "bad_reference") {
		t.Errorf("an outline in a template: %v", err)
	}
}

// In an object of 40,000 members, duplicates are found wherever the
// earlier name is: the first member, a few members before, 25,000 before.
func TestOutlineDuplicatesAcrossBatches(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"first": 0`)
	for i := range 40000 {
		fmt.Fprintf(&b, `, "k%d": %d`, i, i)
	}
	b.WriteString(`, "k30000x": 1, "first": 1, "k39990": 2}`)
	doc := b.String()
	pg, err := outlineOf(t, doc, `{"$ref": "c", "outline": ""}`, OutlineOptions{Lines: 8})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(pg.Text, "\n/first  number  1 byte  0  duplicate name\n") ||
		!strings.Contains(pg.Text, "\n/k30000x  number  1 byte  1\n/first  number  1 byte  1  duplicate name\n/k39990  number  1 byte  2  duplicate name\n") {
		t.Fatalf("outline:\n%s", pg.Text)
	}
	// Paged: a shown member whose name came shortly before it, or 25,000
	// members before, is marked.
	doc = strings.Replace(doc, `"k25000": 25000`, `"k24990": 25000`, 1)
	doc = strings.Replace(doc, `"k25002": 25002`, `"k3": 25002`, 1)
	pg, err = outlineOf(t, doc, `{"$ref": "c", "outline": "", "after": 25000}`, OutlineOptions{Lines: 10})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(pg.Text, "]\n/k24990  number  5 bytes  25000  duplicate name\n/k25001  number  5 bytes  25001\n/k3  number  5 bytes  25002  duplicate name\n") {
		t.Fatalf("outline after 25000:\n%s", pg.Text)
	}
}
