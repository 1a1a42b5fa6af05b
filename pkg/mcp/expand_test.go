package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/retval/retval/pkg/expand"
	"github.com/retval/retval/pkg/retain"
)

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// The model read a big result through the proxy (it saw the stub) and
// calls a tool of the server with arguments that name lines of it: the
// server receives the text; the model gets the server's answer and, last,
// the bytes and SHA-256 of each expanded argument; the read log records
// what the references saved.
func TestProxyExpandsReferences(t *testing.T) {
	st, _ := newStore(t)
	state := &upstreamState{}
	r := relayTo(t, st, upstream(state), "sess1")
	id := stubID(t, text(r.call(t, "read")))
	lines := strings.SplitAfter(bigLines, "\n")
	content := "// new\n" + strings.Join(lines[99:200], "") // and lines 100-200
	args := map[string]any{
		"path":    "moved.txt",
		"content": expand.Prefix + `{"$concat":["// new\n",{"$ref":"` + id + `","lines":[100,200]}]}`,
		// MCP passes objects to the server unchecked: the bare node.
		"first": map[string]any{"$ref": id, "lines": []int{1, 1}},
		// A JSON Schema's "$ref" is not a value id: data.
		"schema":  map[string]any{"$ref": "#/definitions/x"},
		"note":    "costs $5; the form is $expand: then JSON",
		"literal": expand.Prefix + `{"$literal":"$expand:as written"}`,
	}
	res, err := r.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "record", Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("record: %v %+v", err, res)
	}
	calls := state.calls()
	if len(calls) != 1 {
		t.Fatalf("the server got %d calls", len(calls))
	}
	var got map[string]any
	if err := json.Unmarshal(calls[0], &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"path": "moved.txt", "content": content, "first": lines[0],
		"schema": map[string]any{"$ref": "#/definitions/x"}, "note": args["note"], "literal": "$expand:as written",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the server received\n%s\nwant\n%v", calls[0], want)
	}
	summary := fmt.Sprintf("[retval expanded /content: %d bytes, sha256:%s; /first: %d bytes, sha256:%s; /literal: 18 bytes]",
		len(content), sha(content), len(lines[0]), sha(lines[0]))
	if len(res.Content) != 2 || text(res) != fmt.Sprintf("recorded %d bytes", len(calls[0])) ||
		res.Content[1].(*mcp.TextContent).Text != summary {
		t.Errorf("the model got %+v\nwant the server's block, then %s", res.Content, summary)
	}
	var refs []retain.Read
	for _, rd := range logOf(t, st, "r1") {
		if rd.Op == retain.OpReference {
			refs = append(refs, rd)
		}
	}
	expanded := int64(len(content) + len(lines[0]) + len("$expand:as written"))
	if len(refs) != 1 || refs[0].Via != "proxy" || refs[0].Tool != "record" || refs[0].Size != expanded ||
		refs[0].Bytes <= 0 || refs[0].Bytes > 200 {
		t.Errorf("read log: %+v, want one reference of record via proxy, %d bytes expanded from under 200 written", refs, expanded)
	}
}

// A call whose arguments hold no reference reaches the server byte for
// byte, and its result comes back as it went, with no summary: "$" in
// text and a JSON Schema's "$ref" are data.
func TestRelayCallWithoutReferences(t *testing.T) {
	r := newRawRelay(t)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"up","arguments":{ "q":"costs $5, see $expand:{\"$ref\":\"c1\"}", "schema":{"$ref":"#/x"}, "e":"\u00e9" }}}`
	send(t, r.client, call)
	if got := recv(t, r.toServer); got != call {
		t.Errorf("to server: %s\nwant %s", got, call)
	}
	result := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}`
	send(t, r.server, result)
	if got := recv(t, r.toClient); got != result {
		t.Errorf("to client: %s", got)
	}
}

// toolResult decodes a JSON-RPC response carrying a tools/call result.
type toolResult struct {
	ID     json.RawMessage `json:"id"`
	Result struct {
		Content []struct{ Type, Text string }
		IsError bool `json:"isError"`
	}
}

func decodeResult(t *testing.T, m string) toolResult {
	t.Helper()
	var r toolResult
	if err := json.Unmarshal([]byte(m), &r); err != nil {
		t.Fatalf("%v: %s", err, m)
	}
	return r
}

// A call any of whose references fails is answered by the proxy, an
// error result naming every failure by its path in the arguments, and
// nothing of it reaches the server.
func TestRelayRefusesFailingReferences(t *testing.T) {
	r := newRawRelay(t)
	send(t, r.client, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write","arguments":{"content":"$expand:{\"$concat\":[\"x\",{\"$ref\":\"c1\",\"lines\":[9000,9001]},{\"$ref\":\"nope\"}]}","mode":"$expand:{not json","ok":{"$ref":"c1","lines":[1,1]}}}}`)
	res := decodeResult(t, recv(t, r.toClient))
	if string(res.ID) != "1" || !res.Result.IsError || len(res.Result.Content) != 1 {
		t.Fatalf("refusal: %+v", res)
	}
	msg := res.Result.Content[0].Text
	for _, want := range []string{
		"it was not sent to the server",
		`at "/content/$concat/1": line range 9000-9001 starts past the end`, "(invalid_range)",
		`at "/content/$concat/2": no value "nope"`, "(unknown_reference)",
		`at "/mode": `, "(bad_reference)",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q lacks %q", msg, want)
		}
	}
	// The next thing the server sees is the next request.
	send(t, r.client, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if got := recv(t, r.toServer); got != `{"jsonrpc":"2.0","id":2,"method":"ping"}` {
		t.Errorf("the server got %s", got)
	}
	for _, rd := range logOf(t, r.p.Tools.Store, "r1") {
		if rd.Op == retain.OpReference {
			t.Errorf("a refused call was recorded as output saved: %+v", rd)
		}
	}
}

// A batch may hold several calls: each is expanded or refused on its own,
// the server gets the rest of the batch with the expanded arguments, and
// the client one array of every answer, the server's results with their
// summaries.
func TestRelayBatchExpands(t *testing.T) {
	r := newRawRelay(t)
	send(t, r.client, `[`+
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write","arguments":{"content":"$expand:{\"$ref\":\"c1\",\"lines\":[2,3]}"},"_meta":{"progressToken":"p1"}}},`+
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write","arguments":{"content":"$expand:{\"$ref\":\"nope\"}"}}},`+
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"retval_list","arguments":{}}},`+
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"write","arguments":{"content":{"$ref":"c1","lines":[4,4]}}}},`+
		`{"jsonrpc":"2.0","method":"notifications/x"}]`)
	var fwd []struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Arguments struct{ Content string }
			Meta      map[string]string `json:"_meta"`
		}
	}
	got := recv(t, r.toServer)
	if err := json.Unmarshal([]byte(got), &fwd); err != nil || len(fwd) != 3 {
		t.Fatalf("to server: %s", got)
	}
	lines := strings.SplitAfter(bigText(3000), "\n")
	if string(fwd[0].ID) != "1" || fwd[0].Params.Arguments.Content != lines[1]+lines[2] || fwd[0].Params.Meta["progressToken"] != "p1" ||
		string(fwd[1].ID) != "4" || fwd[1].Params.Arguments.Content != lines[3] || fwd[2].Method != "notifications/x" {
		t.Errorf("to server: %s", got)
	}
	send(t, r.server, `[{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"one"}]}},{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"four"}],"isError":true}}]`)
	var answers []json.RawMessage
	got = recv(t, r.toClient)
	if err := json.Unmarshal([]byte(got), &answers); err != nil || len(answers) != 4 {
		t.Fatalf("to client: %s", got)
	}
	byID := map[string]toolResult{}
	for _, a := range answers {
		res := decodeResult(t, string(a))
		byID[string(res.ID)] = res
	}
	summary := func(s string) string {
		return fmt.Sprintf("[retval expanded /content: %d bytes, sha256:%s]", len(s), sha(s))
	}
	if c := byID["1"].Result.Content; len(c) != 2 || c[0].Text != "one" || c[1].Text != summary(lines[1]+lines[2]) {
		t.Errorf("answer 1: %+v", byID["1"])
	}
	if c := byID["4"].Result.Content; !byID["4"].Result.IsError || len(c) != 2 || c[0].Text != "four" || c[1].Text != summary(lines[3]) {
		t.Errorf("answer 4: %+v", byID["4"])
	}
	if c := byID["2"].Result.Content; !byID["2"].Result.IsError || !strings.Contains(c[0].Text, `at "/content": no value "nope"`) {
		t.Errorf("answer 2: %+v", byID["2"])
	}
	if c := byID["3"].Result.Content; len(c) != 1 || !strings.Contains(c[0].Text, `"total":1`) {
		t.Errorf("answer 3: %+v", byID["3"])
	}
}

// With retention off, references are still expanded: --off is about
// results; the instructions still teach the form.
func TestRelayOffStillExpands(t *testing.T) {
	r := newRawRelay(t)
	r.p.Off = true
	send(t, r.client, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write","arguments":{"content":"$expand:{\"$ref\":\"c1\",\"lines\":[1,1]}"}}}`)
	if got := recv(t, r.toServer); !strings.Contains(got, `"content":"line 1 xxxxxxxxxxxxxxxxxxxx\n"`) {
		t.Errorf("to server: %s", got)
	}
	send(t, r.server, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}`)
	if res := decodeResult(t, recv(t, r.toClient)); len(res.Result.Content) != 2 || !strings.HasPrefix(res.Result.Content[1].Text, "[retval expanded /content: 28 bytes") {
		t.Errorf("to client: %+v", res)
	}
}

// The instructions name the reference form once, with retval's tools: a
// client shows them to the model at the start of the session.
func TestProxyInstructionsTeachTheForm(t *testing.T) {
	if !strings.HasPrefix(ProxyInstructions, Instructions+"\n\n") || !strings.HasSuffix(ProxyInstructions, expand.Instructions) {
		t.Errorf("ProxyInstructions = %q", ProxyInstructions)
	}
	for _, d := range (&Tools{Run: "r"}).Defs() {
		if strings.Contains(d.Description, expand.Prefix) {
			t.Errorf("%s's description teaches the form too", d.Name)
		}
	}
}
