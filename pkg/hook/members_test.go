package hook

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// decodeMembers answers as json.Unmarshal does wherever it answers, and it
// answers for the inputs Claude Code sends: their result is checked once
// and never decoded.
func TestDecodeMembersAsUnmarshal(t *testing.T) {
	big := `"` + strings.Repeat(`line\n`, 1000) + `"`
	sent := `{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/w","permission_mode":"default","hook_event_name":"PostToolUse",` +
		`"tool_name":"Bash","tool_input":{"command":"make"},"tool_response":{"stdout":` + big +
		`,"stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false},"tool_use_id":"c"}`
	for _, c := range []struct {
		name, in string
		fast     bool // decodeMembers answers
	}{
		{"what Claude Code sends", sent, true},
		{"an empty object", `{}`, true},
		{"nulls", `{"session_id":null,"tool_input":null,"tool_response":{"stderr":null}}`, true},
		{"a name twice", `{"session_id":"a","session_id":"b"}`, true},
		{"an escaped name", `{"session\u005fid":"a","tool_response":{"is\u0049mage":true}}`, true},
		{"invalid UTF-8", "{\"session_id\":\"a\xff\"}", true},
		{"a name in another case", `{"Session_ID":"a","tool_name":"Bash"}`, false},
		{"both cases", `{"session_id":"a","SESSION_ID":"b"}`, false},
		{"a name folded (long s)", `{"\u017fession_id":"x"}`, false},
		{"a wrong type", `{"session_id":5}`, false},
		{"not an object", `[1,2]`, false},
		{"not JSON", `garbage`, false},
		{"trailing garbage", `{"session_id":"a"} x`, false},
		{"cut short", `{"session_id":"a"`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var fast, slow claudeHead
			m, ok := decodeMembers([]byte(c.in), &fast)
			errSlow := json.Unmarshal([]byte(c.in), &slow)
			if ok != c.fast {
				t.Fatalf("decodeMembers answered: %v, want %v", ok, c.fast)
			}
			if !ok {
				return
			}
			if errSlow != nil {
				t.Fatalf("decodeMembers answered where json.Unmarshal fails: %v", errSlow)
			}
			if !reflect.DeepEqual(fast, slow) {
				t.Errorf("decodeMembers: %+v; json.Unmarshal: %+v", fast, slow)
			}
			raw, ok := m["tool_response"]
			if !ok {
				return
			}
			var resp, respSlow bashResponse
			if _, ok := decodeFields(raw, &resp); !ok || json.Unmarshal(raw, &respSlow) != nil || resp != respSlow {
				t.Errorf("tool_response: decodeFields %+v; json.Unmarshal %+v", resp, respSlow)
			}
		})
	}
}

// decodeFields takes a struct only when every field names its member.
func TestDecodeFieldsNeedsTags(t *testing.T) {
	var v struct {
		A string `json:"a"`
		B string
	}
	if _, ok := decodeFields([]byte(`{"a":"x"}`), &v); ok {
		t.Error("decodeFields took a field without a json tag")
	}
}
