package mcp

import (
	"encoding/json"
	"testing"
)

// retval_peek takes the range forms of peek --lines and --bytes, and a
// query within lines.
func TestPeekToolRangeForms(t *testing.T) {
	st, _ := newStore(t)
	tools := &Tools{Store: st, Run: "r1"}
	for _, tc := range []struct{ args, want string }{
		{`{"id":"c1","lines":"2999"}`, "2999: line 2999 xxxxxxxxxxxxxxxxxxxx\n"},
		{`{"id":"c1","lines":"-1"}`, "3000: line 3000 xxxxxxxxxxxxxxxxxxxx\n"},
		{`{"id":"c1","lines":"2999-"}`, "2999: line 2999 xxxxxxxxxxxxxxxxxxxx\n3000: line 3000 xxxxxxxxxxxxxxxxxxxx\n"},
		{`{"id":"c1","bytes":"-3"}`, "xx\n"},
		{`{"id":"c1","lines":"10-20","query":"line 1"}`, "10: line 10 xxxxxxxxxxxxxxxxxxxx\n11: line 11 xxxxxxxxxxxxxxxxxxxx\n12: line 12 xxxxxxxxxxxxxxxxxxxx\n13: line 13 xxxxxxxxxxxxxxxxxxxx\n14: line 14 xxxxxxxxxxxxxxxxxxxx\n15: line 15 xxxxxxxxxxxxxxxxxxxx\n16: line 16 xxxxxxxxxxxxxxxxxxxx\n17: line 17 xxxxxxxxxxxxxxxxxxxx\n18: line 18 xxxxxxxxxxxxxxxxxxxx\n19: line 19 xxxxxxxxxxxxxxxxxxxx\n[10 matches in lines 10-20; shown 1-10]\n"},
	} {
		r := tools.Call(ToolPeek, json.RawMessage(tc.args))
		if r.IsError || ownText(r) != tc.want {
			t.Errorf("%s: error %v\n%s\nwant\n%s", tc.args, r.IsError, ownText(r), tc.want)
		}
	}
}
