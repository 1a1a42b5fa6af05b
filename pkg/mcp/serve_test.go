package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/retval/retval/pkg/retain"
)

// bigText is n numbered lines, "line N xxxx…".
func bigText(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d %s\n", i, strings.Repeat("x", 20))
	}
	return b.String()
}

// newStore returns a store in a temp dir holding value c1 (3000 lines) of
// run r1, and its stub.
func newStore(t testing.TB) (*retain.Store, string) {
	t.Helper()
	st := retain.Open(t.TempDir())
	res, err := st.Retain(strings.NewReader(bigText(3000)), nil, retain.RetainOptions{Run: "r1", Call: "c1", Meta: retain.Meta{Tool: "t"}})
	if err != nil || !res.Retained {
		t.Fatalf("retain: %v %+v", err, res)
	}
	return st, res.Stub
}

// connect serves tools over pipes and returns a connected client session.
func connect(t testing.TB, tools *Tools) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, tools, "test", c2sR, s2cW) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client"}, nil).Connect(ctx, &mcp.IOTransport{Reader: s2cR, Writer: c2sW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve = %v", err)
		}
	})
	return cs
}

// call calls a tool and returns its one text block and isError.
func call(t testing.TB, cs *mcp.ClientSession, name string, args string) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s %s: %v", name, args, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s %s: %d content blocks, want 1", name, args, len(res.Content))
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

func TestServeListsTools(t *testing.T) {
	st, _ := newStore(t)
	cs := connect(t, &Tools{Store: st, Run: "r1"})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		if len(tl.Description) >= 2048 {
			t.Errorf("%s: description is %d bytes, want under 2 KiB", tl.Name, len(tl.Description))
		}
		if tl.OutputSchema != nil {
			t.Errorf("%s declares an outputSchema", tl.Name)
		}
	}
	if got := strings.Join(names, ","); got != "retval_peek,retval_resolve,retval_list" {
		t.Errorf("tools = %s", got)
	}
	if !strings.Contains(cs.InitializeResult().Instructions, "retval_peek") {
		t.Errorf("instructions = %q", cs.InitializeResult().Instructions)
	}
}

func TestServePeek(t *testing.T) {
	st, stub := newStore(t)
	cs := connect(t, &Tools{Store: st, Run: "r1"})
	if !strings.Contains(stub, "[read more: peek c1 --lines 18-417 | --query TEXT]") {
		t.Fatalf("stub: %s", stub)
	}
	for _, tc := range []struct{ args, want string }{
		{`{"id":"c1","lines":"18-19"}`, "18: line 18 xxxxxxxxxxxxxxxxxxxx\n19: line 19 xxxxxxxxxxxxxxxxxxxx\n"},
		{`{"id":"c1","lines":"2999-3005"}`, "2999: line 2999 xxxxxxxxxxxxxxxxxxxx\n3000: line 3000 xxxxxxxxxxxxxxxxxxxx\n[lines 2999-3000 of 3000; the value ends at line 3000]\n"},
		{`{"id":"c1","query":"LINE 2999 ","ignore_case":true}`, "2999: line 2999 xxxxxxxxxxxxxxxxxxxx\n[1 match; shown 1-1]\n"},
		{`{"id":"c1","query":"^line 1\\d ","regex":true,"after_line":15,"context":0}`, "16: line 16 xxxxxxxxxxxxxxxxxxxx\n17: line 17 xxxxxxxxxxxxxxxxxxxx\n18: line 18 xxxxxxxxxxxxxxxxxxxx\n19: line 19 xxxxxxxxxxxxxxxxxxxx\n[10 matches; shown 7-10]\n"},
		{`{"id":"c1","bytes":"0-8","run":"r1"}`, "line 1 x"},
	} {
		got, isErr := call(t, cs, ToolPeek, tc.args)
		if isErr || got != tc.want {
			t.Errorf("peek %s = %q (isError %v), want %q", tc.args, got, isErr, tc.want)
		}
	}
	// The default page stays within ToolPeekBytes (clients cut longer tool
	// results) and names the next; an explicit peek-bytes applies as set.
	got, _ := call(t, cs, ToolPeek, `{"id":"c1"}`)
	if len(got) > ToolPeekBytes || !strings.HasSuffix(got, "[lines 1-236 of 3000; next: --lines 237-636]\n") {
		t.Errorf("default page of %d bytes ends %q", len(got), got[max(0, len(got)-80):])
	}
	L := retain.DefaultLimits()
	L.PeekBytes = 16 << 10
	cs16 := connect(t, &Tools{Store: st, Run: "r1", Limits: L, PeekBytesSet: true})
	got, _ = call(t, cs16, ToolPeek, `{"id":"c1"}`)
	if !strings.HasSuffix(got, "[lines 1-400 of 3000; next: --lines 401-800]\n") {
		t.Errorf("page with peek-bytes 16KiB ends %q", got[max(0, len(got)-80):])
	}
}

func TestServeErrors(t *testing.T) {
	st, _ := newStore(t)
	cs := connect(t, &Tools{Store: st, Run: "r1"})
	for _, tc := range []struct{ tool, args, code string }{
		{ToolPeek, `{"id":"nope"}`, "(unknown_reference)"},
		{ToolPeek, `{"id":"c1","lines":"5000-5001"}`, "(invalid_range)"},
		{ToolPeek, `{"id":"c1","lines":"1-2","bytes":"0-1"}`, "(usage)"},
		{ToolPeek, `{"id":"c1","regex":true}`, "(usage)"},
		{ToolPeek, `{"lines":"1-2"}`, "(usage)"},
		{ToolPeek, `{"id":"c1","bogus":1}`, "(usage)"},
		{ToolPeek, `{"id":"c1","run":"other"}`, "(unknown_reference)"},
		{ToolResolve, `{}`, "(usage)"},
		{ToolResolve, `{"ref":{"$ref":"c1","pointer":"/a"}}`, "(not_json)"},
		{ToolResolve, `{"ref":{"$ref":"c1","sha256":"00"}}`, "(bad_reference)"},
		{ToolResolve, `{"ref":{"$ref":"c1"}}`, "(too_large)"},
		{ToolResolve, `{"refs":[{"$ref":"c1","lines":[1,1]},{"$ref":"c1","lines":[1,1]},{"$ref":"c1","lines":[1,1]},{"$ref":"c1","lines":[1,1]},{"$ref":"c1","lines":[1,1]},{"$ref":"c1","lines":[1,1]},{"$ref":"c1","lines":[1,1]},{"$ref":"c1","lines":[1,1]},{"$ref":"c1","lines":[1,1]}]}`, "(budget_exhausted)"},
		{ToolList, `{"page":-1}`, "(bad_reference)"},
	} {
		got, isErr := call(t, cs, tc.tool, tc.args)
		if !isErr || !strings.HasPrefix(got, tc.tool+": ") || !strings.HasSuffix(got, tc.code) {
			t.Errorf("%s %s = %q (isError %v), want an error ending %s", tc.tool, tc.args, got, isErr, tc.code)
		}
	}
	// An error about options names the tool's arguments, which the
	// model can pass, not the CLI's flags, which it cannot.
	for args, want := range map[string]string{
		`{"id":"c1","query":"x","context":-1}`: "retval_peek: context and after_line must be ≥ 0 (usage)",
		`{"id":"c1","query":"(","regex":true}`: `retval_peek: invalid regex "(": `,
	} {
		if got, _ := call(t, cs, ToolPeek, args); !strings.HasPrefix(got, want) || strings.Contains(got, "--") {
			t.Errorf("%s = %q, want it to start %q and name no flag", args, got, want)
		}
	}
	// Without a run of its own, the server needs one in every call.
	cs = connect(t, &Tools{Store: st})
	if got, isErr := call(t, cs, ToolList, `{}`); !isErr || !strings.HasSuffix(got, "(usage)") {
		t.Errorf("list without a run = %q", got)
	}
}

func TestServeResolve(t *testing.T) {
	st, _ := newStore(t)
	cs := connect(t, &Tools{Store: st, Run: "r1"})
	got, isErr := call(t, cs, ToolResolve, `{"ref":{"$ref":"c1","lines":[2,3]}}`)
	if isErr || got != "line 2 xxxxxxxxxxxxxxxxxxxx\nline 3 xxxxxxxxxxxxxxxxxxxx\n" {
		t.Errorf("resolve = %q", got)
	}
	got, isErr = call(t, cs, ToolResolve, `{"refs":[{"$ref":"c1","bytes":[0,6]},{"$ref":"zz"},{"$list_results":0}]}`)
	var ans []struct {
		OK    bool   `json:"ok"`
		Text  string `json:"text"`
		Error struct{ Code string }
	}
	if err := json.Unmarshal([]byte(got), &ans); err != nil || isErr || len(ans) != 3 {
		t.Fatalf("resolve refs = %q (%v)", got, err)
	}
	if !ans[0].OK || ans[0].Text != "line 1" || ans[1].OK || ans[1].Error.Code != "unknown_reference" || !ans[2].OK {
		t.Errorf("answers = %+v", ans)
	}
	// Each call is a step of its own: eight lookups, again and again.
	eight := `{"refs":[` + strings.TrimSuffix(strings.Repeat(`{"$ref":"c1","lines":[1,1]},`, 8), ",") + `]}`
	for range 3 {
		if got, isErr := call(t, cs, ToolResolve, eight); isErr {
			t.Fatalf("eight lookups: %s", got)
		}
	}
}

func TestServeList(t *testing.T) {
	st, _ := newStore(t)
	cs := connect(t, &Tools{Store: st, Run: "r1"})
	got, isErr := call(t, cs, ToolList, `{}`)
	var page struct {
		Run    string
		Total  int
		Next   *int
		Values []struct{ ID string }
	}
	if err := json.Unmarshal([]byte(got), &page); err != nil || isErr {
		t.Fatalf("list = %q (%v)", got, err)
	}
	if page.Run != "r1" || page.Total != 1 || page.Next != nil || len(page.Values) != 1 || page.Values[0].ID != "c1" {
		t.Errorf("list = %s", got)
	}
	if got, _ := call(t, cs, ToolList, `{"page":1}`); !strings.Contains(got, `"values":[]`) {
		t.Errorf("list page 1 = %s", got)
	}
}

// BenchmarkServePeek is the latency of one retval_peek call of 40 lines
// through a client session (in memory: no process, no pipe), with and
// without the value cache.
func BenchmarkServePeek(b *testing.B) {
	for _, cached := range []bool{false, true} {
		b.Run(fmt.Sprintf("cache=%v", cached), func(b *testing.B) { benchServePeek(b, cached) })
	}
}

func benchServePeek(b *testing.B, cached bool) {
	st, _ := newStore(b)
	if cached { // as retval mcp serve keeps its store
		st.Cache = retain.NewValueCache(retain.DefaultValueCacheBytes)
	}
	cs := connect(b, &Tools{Store: st, Run: "r1"})
	args := json.RawMessage(`{"id":"c1","lines":"120-160"}`)
	var took []time.Duration
	for b.Loop() {
		t0 := time.Now()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ToolPeek, Arguments: args})
		took = append(took, time.Since(t0))
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "median-µs/call")
}

// TestServePeekOutline: retval_peek lists a JSON value's members as the
// JSON-aware stub says to, pages with after, and outlines one line's
// document of an NDJSON value.
func TestServePeekOutline(t *testing.T) {
	st := retain.Open(t.TempDir())
	var b strings.Builder
	b.WriteString(`{"name":"x","items":[`)
	for i := range 2000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d}`, i)
	}
	b.WriteString(`]}`)
	res, err := st.Retain(strings.NewReader(b.String()), nil, retain.RetainOptions{Run: "r1", Call: "j"})
	if err != nil || !strings.Contains(res.Stub, "[read more: peek j --outline /items | --lines 1-1 | --query TEXT]") {
		t.Fatalf("retain: %v\n%s", err, res.Stub)
	}
	nd := strings.Repeat(`{"Action":"pass","Test":"TestA"}`+"\n", 30)
	if _, err := st.Retain(strings.NewReader(nd), nil, retain.RetainOptions{Run: "r1", Call: "nd", Limits: retain.Limits{Threshold: 100}}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, &Tools{Store: st, Run: "r1"})
	text, isErr := call(t, cs, ToolPeek, `{"id":"j","outline":"/items","after":1996}`)
	if isErr || text != "[outline of \"/items\": array, 2000 elements, 22891 bytes]\n/items/1997  object  1 member  11 bytes\n/items/1998  object  1 member  11 bytes\n/items/1999  object  1 member  11 bytes\n[elements 1997-1999 of 2000]\n" {
		t.Fatalf("outline after 1996: %v\n%s", isErr, text)
	}
	text, isErr = call(t, cs, ToolPeek, `{"id":"nd","outline":"","lines":"2"}`)
	if isErr || text != "[outline of line 2, the whole document: object, 2 members, 32 bytes]\n/Action  string  6 bytes  \"pass\"\n/Test  string  7 bytes  \"TestA\"\n" {
		t.Fatalf("outline of line 2: %v\n%s", isErr, text)
	}
	if text, isErr = call(t, cs, ToolPeek, `{"id":"j","outline":"","query":"x"}`); !isErr || !strings.Contains(text, "outline cannot be combined") {
		t.Fatalf("outline with query: %v %s", isErr, text)
	}
}

// serveRaw sends frames to Serve and returns what it answered, one frame
// per line.
func serveRaw(t *testing.T, tools *Tools, frames ...string) []string {
	t.Helper()
	var out strings.Builder
	if err := Serve(context.Background(), tools, "test", strings.NewReader(strings.Join(frames, "\n")+"\n"), &out); err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
}

// A request whose id is an object or null is not a valid JSON-RPC
// request: -32600, with a null id (it was answered as if valid).
func TestServeInvalidID(t *testing.T) {
	st, _ := newStore(t)
	got := serveRaw(t, &Tools{Store: st, Run: "r1"},
		`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":7,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`)
	if len(got) != 4 || !strings.HasPrefix(got[3], `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: the id is a number with a fraction`) || !strings.HasPrefix(got[0], `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: the id is an object`) ||
		!strings.HasPrefix(got[1], `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: the id is null`) ||
		got[2] != `{"jsonrpc":"2.0","id":7,"result":{}}` {
		t.Errorf("answers:\n%s", strings.Join(got, "\n"))
	}
}

// retval_list of a run with no values yet is an empty page, not an error.
func TestServeListEmptyRun(t *testing.T) {
	st, _ := newStore(t)
	cs := connect(t, &Tools{Store: st, Run: "fresh"})
	text, isErr := call(t, cs, ToolList, `{}`)
	if isErr || text != `{"run":"fresh","page":0,"total":0,"next":null,"values":[]}` {
		t.Errorf("retval_list of an empty run: %v %s", isErr, text)
	}
	// A run the call names that does not exist is a typo, not empty.
	if text, isErr := call(t, cs, ToolList, `{"run":"frsh"}`); !isErr || !strings.HasSuffix(text, "(unknown_reference)") {
		t.Errorf("retval_list of a misspelt run: %v %s", isErr, text)
	}
}
