package ui

import (
	"encoding/json"
	"strings"
	"testing"
)

// Every API answers a mistake in its path or its parameters, and what the
// store says of the run or value named, with the status of its error code
// and the message that says what is wrong; paging parameters that are not
// numbers fall back to their defaults.
func TestAPIErrors(t *testing.T) {
	s := newStore(t)
	put(t, s, "r", "log", "Bash", numbered(10))
	put(t, s, "r", "doc", "mcp__api__get", []byte("{\"a\": [1, 2]}\n"))
	srv := newServer(t, s)
	noValue := `no value "nope" in run "r" (list them with: retval catalogue --run r)`
	for _, c := range []struct {
		path      string
		status    int
		code, msg string // of the error; "" for a page
		pageHolds string // a page holds this
	}{
		{"/api/runs/nope", 404, "unknown_reference", `no run "nope" in this store`, ""},
		{"/api/runs/..%2Fx", 404, "unknown_reference", `no run "___x-ade92630" in this store`, ""},
		{"/api/runs/nope/timeline", 404, "unknown_reference", `no run "nope" in STORE`, ""},
		{"/api/runs/nope/values/log", 404, "unknown_reference", `no run "nope" in STORE`, ""},
		{"/api/runs/..%2Fx/values/log/lines", 404, "unknown_reference", `no run "___x-ade92630" in STORE`, ""},
		{"/api/runs/r/values/..%2Fx", 404, "unknown_reference", `no value "../x" in run "r" (list them with: retval catalogue --run r)`, ""},
		{"/api/runs/r/values/nope", 404, "unknown_reference", noValue, ""},
		{"/api/runs/r/values/nope/lines", 404, "unknown_reference", noValue, ""},
		{"/api/runs/r/values/nope/query?q=x", 404, "unknown_reference", noValue, ""},
		{"/api/runs/r/values/nope/outline", 404, "unknown_reference", noValue, ""},
		{"/api/runs/r/values/nope/raw", 404, "unknown_reference", noValue, ""},
		{"/api/runs/r/values/log/query", 400, "usage", "empty search", ""},
		{"/api/runs/r/values/doc/outline?after=x", 400, "usage", `after "x": want a position from 0`, ""},
		{"/api/runs/r/values/doc/outline?after=-1", 400, "usage", `after "-1": want a position from 0`, ""},
		{"/api/runs/r/values/doc/outline?line=0", 400, "usage", `line "0": want a line number from 1`, ""},
		{"/api/runs/r/values/doc/outline?line=x", 400, "usage", `line "x": want a line number from 1`, ""},
		{"/api/runs/r/values/log/outline", 400, "not_json", `value "log" is not one valid JSON document, so a pointer selects nothing in it; read it with bytes or lines instead`, ""},
		{"/api/stats?since=x", 400, "usage", `since: invalid duration "x"`, ""},
		{"/api/nope", 400, "usage", "no such API: /api/nope", ""},
		{"/api/runs/r/values/log/lines?first=x&count=y", 200, "", "", `{"first":1,"total":10,"lines":[{"n":1,"text":"line 1 of the value"}]}`},
		{"/api/runs/r/values/log/lines?first=-4&count=2", 200, "", "", `{"first":1,"total":10,"lines":[{"n":1,"text":"line 1 of the value"},{"n":2,`},
		{"/api/runs/r/timeline?offset=x&limit=-3", 200, "", "", `"offset":0,"calls":[{"value":"log"`},
		{"/api/runs?offset=-1&limit=x&wait=1", 200, "", "", `"offset":0,`},
	} {
		code, body := get(t, srv, c.path)
		if code != c.status {
			t.Errorf("%s: %d %s, want %d", c.path, code, body, c.status)
			continue
		}
		if c.code == "" {
			if !strings.Contains(string(body), c.pageHolds) {
				t.Errorf("%s: %s, want it to hold %s", c.path, body, c.pageHolds)
			}
			continue
		}
		var e struct {
			Error struct{ Code, Message string }
		}
		if err := json.Unmarshal(body, &e); err != nil {
			t.Fatalf("%s: %v: %s", c.path, err, body)
		}
		msg := strings.ReplaceAll(c.msg, "STORE", s.Dir)
		if e.Error.Code != c.code || !strings.HasPrefix(e.Error.Message, msg) {
			t.Errorf("%s: %s: %s, want %s: %s", c.path, e.Error.Code, e.Error.Message, c.code, msg)
		}
	}
}
