package mcp

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/retval/retval/pkg/retain"
)

func logOf(t *testing.T, st *retain.Store, run retain.ID) []retain.Read {
	t.Helper()
	var out []retain.Read
	if _, err := st.ScanReads(run, func(r *retain.Read) { out = append(out, *r) }); err != nil {
		t.Fatal(err)
	}
	return out
}

func text(r *mcp.CallToolResult) string { return r.Content[0].(*mcp.TextContent).Text }

// ownText is the text of a result of retval's own tools.
func ownText(r *CallToolResult) string { return r.Content[0].Text }

// TestToolsReadLog: every call of retval's tools is recorded in the run's
// read log with what it returned, failed ones with their code; a resolve
// of several references is one call of several lookups.
func TestToolsReadLog(t *testing.T) {
	st, _ := newStore(t)
	tools := &Tools{Store: st, Run: "r1"}
	peek := tools.Call(ToolPeek, json.RawMessage(`{"id":"c1","lines":"1-3"}`))
	bad := tools.Call(ToolPeek, json.RawMessage(`{"id":"nope"}`))
	one := tools.Call(ToolResolve, json.RawMessage(`{"ref":{"$ref":"c1","lines":[2,2]}}`))
	two := tools.Call(ToolResolve, json.RawMessage(`{"refs":[{"$ref":"c1","bytes":[0,4]},{"$ref":"c1","lines":[9999,9999]}]}`))
	list := tools.Call(ToolList, json.RawMessage(`{}`))
	if peek.IsError || !bad.IsError || one.IsError || two.IsError || list.IsError {
		t.Fatalf("unexpected results: %v %v %v %v %v", peek.IsError, bad.IsError, one.IsError, two.IsError, list.IsError)
	}
	type rec struct {
		op    retain.ReadOp
		via   string
		value retain.ID
		call  bool
		code  retain.Code
		bytes int64
	}
	want := []rec{
		{retain.OpStub, "retain", "c1", false, "", -1},
		{retain.OpRead, ToolPeek, "c1", true, "", int64(len(ownText(peek)))},
		{retain.OpRead, ToolPeek, "nope", true, retain.CodeUnknownReference, -1},
		{retain.OpRead, ToolResolve, "c1", true, "", int64(len(ownText(one)))},
		{retain.OpRead, ToolResolve, "c1", true, "", 4},
		{retain.OpRead, ToolResolve, "c1", false, retain.CodeInvalidRange, -1},
		{retain.OpRead, ToolList, "", true, "", int64(len(ownText(list)))},
	}
	got := logOf(t, st, "r1")
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Op != w.op || g.Via != w.via || g.Value != w.value || g.Call != w.call || g.Code != w.code || w.bytes >= 0 && g.Bytes != w.bytes {
			t.Errorf("record %d: %+v, want %+v", i, g, w)
		}
	}
}

// TestProxyReadLog: the proxy records the stub it shows for a big result,
// with the value's size.
func TestProxyReadLog(t *testing.T) {
	st, _ := newStore(t)
	r := relayTo(t, st, upstream(nil), "sess1")
	res := r.call(t, "read")
	id := retain.ID(stubID(t, text(res)))
	for _, g := range logOf(t, st, "r1") {
		if g.Value == id {
			if g.Op != retain.OpStub || g.Via != "proxy" || g.Size != int64(len(bigLines)) || g.Bytes != int64(len(text(res))) {
				t.Errorf("record %+v: want the proxy's stub of %d bytes for %d", g, len(text(res)), len(bigLines))
			}
			return
		}
	}
	t.Errorf("no record of %s", id)
}
