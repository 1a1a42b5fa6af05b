package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// decodedBy is, for each agent whose hook decodes its input with
// decodeMembers, a new value of the struct it decodes into.
var decodedBy = map[string]func() any{
	"codex":      func() any { return new(Input) },
	"gemini-cli": func() any { return new(geminiInput) },
	"opencode":   func() any { return new(opencodeInput) },
}

// sameAsUnmarshal checks that decodeMembers sets v's fields as
// json.Unmarshal does, wherever it answers; where it does not, v is left
// zero. It reports whether decodeMembers answered.
func sameAsUnmarshal(t *testing.T, in []byte, newV func() any) bool {
	t.Helper()
	fast, slow := newV(), newV()
	_, ok := decodeMembers(in, fast)
	errSlow := json.Unmarshal(in, slow)
	if !ok {
		if !reflect.ValueOf(fast).Elem().IsZero() {
			t.Errorf("decodeMembers did not answer, and left %+v", fast)
		}
		return false
	}
	if errSlow != nil {
		t.Fatalf("decodeMembers answered where json.Unmarshal fails: %v", errSlow)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Errorf("decodeMembers: %+v\njson.Unmarshal: %+v", fast, slow)
	}
	return true
}

// The hook inputs real clients sent (testdata/inputs/AGENT, see its
// README) decode as json.Unmarshal decodes them, and every valid one
// without json.Unmarshal: its json.RawMessage fields are slices of the
// input, not copies.
func TestDecodeMembersRealInputs(t *testing.T) {
	for agent, newV := range decodedBy {
		files, err := filepath.Glob(filepath.Join("testdata", "inputs", agent, "*.json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no inputs (%v)", agent, err)
		}
		for _, f := range files {
			t.Run(agent+"/"+filepath.Base(f), func(t *testing.T) {
				in, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				ok := sameAsUnmarshal(t, in, newV)
				if valid := json.Valid(in); ok != valid {
					t.Fatalf("decodeMembers answered %v for an input valid %v", ok, valid)
				}
				if !ok {
					return
				}
				v := newV()
				decodeMembers(in, v)
				for _, raw := range rawMessages(reflect.ValueOf(v).Elem()) {
					if len(raw) > 0 && !within(raw, in) {
						t.Errorf("%.40s… is a copy, not a slice of the input", raw)
					}
				}
			})
		}
	}
}

// rawMessages are the json.RawMessage values in v, a struct, at any depth.
func rawMessages(v reflect.Value) []json.RawMessage {
	switch {
	case v.Type() == rawMessageType:
		return []json.RawMessage{v.Interface().(json.RawMessage)}
	case v.Type() == rawMessagesType:
		return v.Interface().([]json.RawMessage)
	case v.Kind() == reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return rawMessages(v.Elem())
	case v.Kind() == reflect.Struct:
		var all []json.RawMessage
		for i := range v.NumField() {
			all = append(all, rawMessages(v.Field(i))...)
		}
		return all
	}
	return nil
}

// within reports whether b's bytes lie inside in's.
func within(b, in []byte) bool {
	for i := range in {
		if &in[i] == &b[0] {
			return i+len(b) <= len(in)
		}
	}
	return false
}

// The members decodeMembers decodes in turn (a struct, a pointer to one)
// and takes apart ([]json.RawMessage) are decoded as json.Unmarshal
// decodes them; where they might not be (a name given twice, which
// encoding/json merges, a name in another case, a member of another
// type), decodeMembers does not answer.
func TestDecodeMembersNested(t *testing.T) {
	for _, c := range []struct {
		name, in string
		newV     func() any
		fast     bool // decodeMembers answers
	}{
		{"opencode's after", `{"input":{"tool":"bash","sessionID":"s","callID":"c","args":{"command":"seq 1 3"}},` +
			`"output":{"title":"t","output":"1\n2\n3\n","metadata":{"output":"1\n2\n3\n","outputPath":"/p","exit":0}}}`, decodedBy["opencode"], true},
		{"an MCP result", `{"input":{"tool":"fs_read","sessionID":"s","callID":"c"},"output":{"content":[{"type":"text","text":"a"}, ` +
			"\n\t" + `{"type":"image","data":"AA==","mimeType":"image/png"} ],"structuredContent":{"a":1}}}`, decodedBy["opencode"], true},
		{"no content", `{"input":{},"output":{"content":[]}}`, decodedBy["opencode"], true},
		{"null members", `{"input":null,"output":{"output":null,"content":null,"metadata":null,"args":null}}`, decodedBy["opencode"], true},
		{"white space", " {\n \"input\" : { \"args\" :\t{ \"a\" : [ 1 , 2 ] } } ,\"output\":{\"args\":\"x\" } }\n", decodedBy["opencode"], true},
		{"escaped names", `{"\u0069nput":{"sessi\u006fnID":"s"},"output":{"metadata":{"output\u0050ath":"p"}}}`, decodedBy["opencode"], true},
		{"a string member twice", `{"event":"a","event":"system"}`, decodedBy["opencode"], true},
		{"content twice", `{"output":{"content":[1],"content":[2,3]}}`, decodedBy["opencode"], true},
		{"output twice", `{"output":{"output":"a"},"output":{"content":[]}}`, decodedBy["opencode"], false},
		{"metadata twice", `{"output":{"metadata":{"outputPath":"a"},"metadata":{}}}`, decodedBy["opencode"], false},
		{"a nested name in another case", `{"input":{"Tool":"bash"}}`, decodedBy["opencode"], false},
		{"content not a list", `{"output":{"content":{"type":"text"}}}`, decodedBy["opencode"], false},
		{"a string for an object", `{"input":"bash"}`, decodedBy["opencode"], false},
		{"a nested wrong type", `{"output":{"output":5}}`, decodedBy["opencode"], false},
		{"a wrong type after a member", `{"event":"x","input":{"tool":"bash"},"output":{"output":5}}`, decodedBy["opencode"], false},
		{"Gemini's AfterTool", `{"session_id":"s","hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{"command":"ls"},` +
			`"tool_response":{"llmContent":"<untrusted_context>\nOutput: a\n</untrusted_context>","returnDisplay":"a","error":null}}`, decodedBy["gemini-cli"], true},
		{"an MCP tool's parts", `{"tool_response":{"llmContent":[{"text":"x"}],"returnDisplay":"x"}}`, decodedBy["gemini-cli"], true},
		{"a null tool_response", `{"tool_response":null}`, decodedBy["gemini-cli"], true},
		{"an error", `{"tool_response":{"error":{"message":"failed","type":"x"}}}`, decodedBy["gemini-cli"], true},
		{"tool_response twice", `{"tool_response":{"llmContent":"a"},"tool_response":{"error":null}}`, decodedBy["gemini-cli"], false},
		{"tool_response then null", `{"tool_response":{"llmContent":"a"},"tool_response":null}`, decodedBy["gemini-cli"], false},
		{"a tool_response list", `{"session_id":"s","tool_response":[]}`, decodedBy["gemini-cli"], false},
		{"Codex's PostToolUse", `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_response":"a\nb\n","tool_use_id":"c"}`,
			decodedBy["codex"], true},
		{"tool_input twice", `{"tool_input":{"a":1},"tool_input":{"b":2}}`, decodedBy["codex"], true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if ok := sameAsUnmarshal(t, []byte(c.in), c.newV); ok != c.fast {
				t.Errorf("decodeMembers answered: %v, want %v", ok, c.fast)
			}
		})
	}
}

// Whatever the input, decodeMembers answers as json.Unmarshal does, or
// not at all.
func FuzzDecodeMembers(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "inputs", "*", "*.json"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && len(b) < 8<<10 {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"output":{"content":[1],"content":[2]},"input":{"args":null}}`))
	f.Add([]byte(`{"tool_response":{"llmContent":"a"},"TOOL_RESPONSE":null}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, newV := range decodedBy {
			sameAsUnmarshal(t, in, newV)
		}
	})
}

// allocated is how many bytes f allocates: the least of a few calls, so
// that an allocation elsewhere in the process is not counted.
func allocated(f func()) uint64 {
	least := ^uint64(0)
	for range 3 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}

// A hook input whose big member the hook hands on as it is, or does not
// read, is answered without a copy of that member: the hook allocates
// less than a quarter of its size, where decoding the whole input with
// json.Unmarshal copies it. (Answers that retain the member decode it
// once on purpose, and what retaining allocates is retain's.)
func TestHookInputsNotCopied(t *testing.T) {
	big := strings.Repeat("one line of a tool's output, 0123456789\n", (4<<20)/40)
	dir := t.TempDir()
	for _, c := range []struct {
		agent, name string
		in          map[string]any
		reason      string // the answer's
	}{
		{"codex", "PostToolUse: Codex's own cut of the output", map[string]any{"session_id": "s", "hook_event_name": "PostToolUse",
			"tool_name": "Bash", "tool_use_id": "c1", "tool_input": map[string]any{"command": "make"}, "tool_response": big},
			"nothing to retain"},
		{"codex", "PreToolUse: an MCP call's arguments without a reference", map[string]any{"session_id": "s", "hook_event_name": "PreToolUse",
			"tool_name": "mcp__fs__write_file", "tool_use_id": "c2", "tool_input": map[string]any{"path": "/p/big.txt", "content": big}},
			"nothing to rewrite"},
		{"gemini-cli", "BeforeTool: write_file's arguments without a reference", map[string]any{"session_id": "s", "hook_event_name": "BeforeTool",
			"timestamp": geminiTime, "tool_name": "write_file", "tool_input": map[string]any{"file_path": "/p/big.txt", "content": big}},
			"no $expand: reference"},
		{"gemini-cli", "AfterTool: write_file's", map[string]any{"session_id": "s", "hook_event_name": "AfterTool",
			"timestamp": geminiTime, "tool_name": "write_file", "tool_input": map[string]any{"file_path": "/p/big.txt", "content": big},
			"tool_response": map[string]any{"llmContent": "Successfully created and wrote to new file: /p/big.txt.", "returnDisplay": "ok"}},
			"its output is not retained"},
		{"gemini-cli", "AfterTool: a failed command's", map[string]any{"session_id": "s", "hook_event_name": "AfterTool",
			"timestamp": geminiTime, "tool_name": "run_shell_command", "tool_input": map[string]any{"command": "make"},
			"tool_response": map[string]any{"llmContent": big, "returnDisplay": big, "error": map[string]any{"message": "failed"}}},
			"the call failed"},
		{"opencode", "tool.execute.before: arguments without a reference", map[string]any{"event": "tool.execute.before",
			"input": map[string]any{"tool": "write", "sessionID": "s", "callID": "c3"}, "output": map[string]any{"args": map[string]any{"filePath": "/p/big.txt", "content": big}}},
			"no $expand: reference"},
		{"opencode", "tool.execute.after: write's", map[string]any{"input": map[string]any{"tool": "write", "sessionID": "s", "callID": "c4",
			"args": map[string]any{"filePath": "/p/big.txt", "content": big}}, "output": map[string]any{"title": "big.txt", "output": "Wrote file successfully.", "metadata": map[string]any{}}},
			"within the threshold"},
	} {
		t.Run(c.agent+"/"+c.name, func(t *testing.T) {
			in, err := json.Marshal(c.in)
			if err != nil {
				t.Fatal(err)
			}
			agent, _ := Lookup(c.agent)
			var ans Answer
			n := allocated(func() {
				ans, err = agent.Answer(&Hook{opts: Options{RunsDir: dir}, readMore: agent.ReadMore(), agent: agent.Name()}, in)
			})
			if err != nil || !strings.Contains(ans.Reason, c.reason) {
				t.Fatalf("answered %q %v, want %q", ans.Reason, err, c.reason)
			}
			if n > uint64(len(big))/4 {
				t.Errorf("answering a %d-byte input allocated %d bytes: its %d-byte member was copied", len(in), n, len(big))
			}
		})
	}
}
