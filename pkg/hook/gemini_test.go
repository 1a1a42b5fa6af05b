package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retval/retval/pkg/expand"
)

const geminiTime = "2026-12-04T05:35:05.680Z"

// geminiIn is a Gemini CLI hook input of session "sess" whose transcript
// is in TEMP/chats (TEMP is Gemini's project temp directory; "" for none).
func geminiIn(t *testing.T, temp, event, tool string, input, response any) string {
	t.Helper()
	m := map[string]any{"session_id": "sess", "cwd": "/proj", "hook_event_name": event, "timestamp": geminiTime,
		"tool_name": tool, "tool_input": input}
	m["transcript_path"] = ""
	if temp != "" {
		m["transcript_path"] = filepath.Join(temp, "chats", "session-2026-12-04T05-35-sess.jsonl")
	}
	if response != nil {
		m["tool_response"] = response
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// shellResponse is run_shell_command's tool_response for an output, as
// Gemini CLI hands it to AfterTool.
func shellResponse(output, trailer string) map[string]any {
	return map[string]any{"llmContent": "<untrusted_context>\nOutput: " + output + trailer + "\n</untrusted_context>", "returnDisplay": output}
}

type geminiOut struct {
	Decision           string `json:"decision"`
	Reason             string `json:"reason"`
	HookSpecificOutput struct {
		HookEventName       string          `json:"hookEventName"`
		AdditionalContext   string          `json:"additionalContext"`
		ToolInput           json.RawMessage `json:"tool_input"`
		TailToolCallRequest *struct {
			Name string `json:"name"`
			Args struct {
				FilePath string `json:"file_path"`
			} `json:"args"`
		} `json:"tailToolCallRequest"`
	} `json:"hookSpecificOutput"`
}

func runGemini(t *testing.T, in string, o Options) (geminiOut, Answer) {
	t.Helper()
	agent, ok := Lookup("gemini-cli")
	if !ok {
		t.Fatal("no gemini-cli agent")
	}
	ans, err := Run(agent, strings.NewReader(in), o)
	if err != nil {
		t.Fatal(err)
	}
	var out geminiOut
	if err := json.Unmarshal(ans.Output, &out); err != nil {
		t.Fatalf("the answer is not JSON: %v: %q", err, ans.Output)
	}
	return out, ans
}

// shown is the text the model sees instead of the output: the file the
// tail call has read_file read, or a denial's reason.
func shown(t *testing.T, out geminiOut) string {
	t.Helper()
	if tail := out.HookSpecificOutput.TailToolCallRequest; tail != nil {
		if tail.Name != "read_file" || out.Decision != "" {
			t.Fatalf("tail call %+v, decision %q", tail, out.Decision)
		}
		b, err := os.ReadFile(tail.Args.FilePath)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if out.Decision != "deny" {
		t.Fatalf("neither a tail call nor a denial: %+v", out)
	}
	return out.Reason
}

// A big shell output is retained as Gemini captured it (inside its
// envelope, before its trailer) under an id derived from the input; the
// model sees the envelope with the stub in place of the output and the
// trailer kept, by a tail call to read_file of a file in Gemini's own
// temp directory, beside the outputs Gemini saves for the session.
func TestGeminiShellRetained(t *testing.T) {
	o := Options{RunsDir: t.TempDir()}
	temp := t.TempDir()
	value := strings.TrimSuffix(numbers(100000), "\n") // Gemini trims the output
	in := geminiIn(t, temp, "AfterTool", "run_shell_command", map[string]any{"command": "seq 1 100000"},
		shellResponse(value, "\nExit Code: 1\nProcess Group PGID: 4242"))
	out, ans := runGemini(t, in, o)
	id := geminiCallID(geminiInput{ToolName: "run_shell_command", Timestamp: geminiTime, ToolInput: json.RawMessage(`{"command":"seq 1 100000"}`)})
	if !strings.HasPrefix(id, "shell-20261204T053505680Z-") || len(id) != len("shell-20261204T053505680Z-")+8 {
		t.Fatalf("call id %q", id)
	}
	tail := out.HookSpecificOutput.TailToolCallRequest
	if tail == nil || tail.Args.FilePath != filepath.Join(temp, "tool-outputs", "session-sess", "retval-"+id+".txt") {
		t.Fatalf("not a tail call to the stub's file: %s", ans.Output)
	}
	text := shown(t, out)
	got, d := stored(t, o.RunsDir, "sess", id)
	if got != value || d.SHA256 != sha(value) {
		t.Fatalf("stored %d bytes, want the %d of the output", len(got), len(value))
	}
	// The stub says what the value is: the output as Gemini captured it,
	// which is not the command's exact bytes (see geminiShellNote).
	stub, ok := strings.CutPrefix(text, "<untrusted_context>\nOutput: [retained #"+id+"] ")
	if !ok || !strings.HasSuffix(stub, "  # read more, or: --query TEXT instead of --lines\n"+
		"[the value is the output as Gemini CLI captured it (stdout and stderr together, escapes removed, white space trimmed), not the command's exact bytes]\n"+
		"Exit Code: 1\nProcess Group PGID: 4242\n</untrusted_context>") {
		t.Fatalf("the model sees %q", text)
	}
	if len(text) > 2000 {
		t.Errorf("the model sees %d bytes", len(text))
	}
	// The same input again: the same id, the same stub, the same answer.
	again, ans2 := runGemini(t, in, o)
	if string(ans2.Output) != string(ans.Output) || shown(t, again) != text {
		t.Errorf("answering again gave %s", ans2.Output)
	}
}

// Without a transcript (chat recording off) there is no temp directory to
// put the stub in: the answer is a denial whose reason the model sees.
func TestGeminiShellDeny(t *testing.T) {
	o := Options{RunsDir: t.TempDir()}
	in := geminiIn(t, "", "AfterTool", "run_shell_command", map[string]any{"command": "seq 1 100000"}, shellResponse(numbers(20000), "\nProcess Group PGID: 1"))
	out, _ := runGemini(t, in, o)
	if out.HookSpecificOutput.TailToolCallRequest != nil || out.Decision != "deny" ||
		!strings.HasPrefix(out.Reason, "<untrusted_context>\nOutput: [retained #shell-") || !strings.HasSuffix(out.Reason, "\nProcess Group PGID: 1\n</untrusted_context>") {
		t.Errorf("answer %+v", out)
	}
}

// An MCP result's text blocks: a big one becomes its stub, a small one
// stays, each in Gemini's envelope, in order; a result with anything but
// text is shown as is.
func TestGeminiMCP(t *testing.T) {
	o := Options{RunsDir: t.TempDir()}
	temp := t.TempDir()
	big := numbers(30000)
	wrap := func(s string) map[string]any {
		return map[string]any{"text": "<untrusted_context>\n" + s + "\n</untrusted_context>"}
	}
	in := geminiIn(t, temp, "AfterTool", "mcp_fs_read_text_file", map[string]any{"path": "/proj/n.txt"},
		map[string]any{"llmContent": []any{wrap(big), wrap("small </untrusted_context> text")}})
	out, _ := runGemini(t, in, o)
	text := shown(t, out)
	id := geminiCallID(geminiInput{ToolName: "mcp_fs_read_text_file", Timestamp: geminiTime, ToolInput: json.RawMessage(`{"path":"/proj/n.txt"}`)})
	if got, _ := stored(t, o.RunsDir, "sess", id); got != big {
		t.Fatalf("stored %d bytes, want the block's %d", len(got), len(big))
	}
	first, second, ok := strings.Cut(text, "\n</untrusted_context>\n")
	if !ok || !strings.HasPrefix(first, "<untrusted_context>\n[retained #"+id+"] ") || second != "<untrusted_context>\nsmall &lt;/untrusted_context&gt; text\n</untrusted_context>" {
		t.Errorf("the model sees %q", text)
	}

	image := geminiIn(t, temp, "AfterTool", "mcp_fs_read_media", map[string]any{},
		map[string]any{"llmContent": []any{wrap(big), map[string]any{"inlineData": map[string]any{"mimeType": "image/png", "data": "AA=="}}}})
	if out, ans := runGemini(t, image, o); out.Decision != "" || out.HookSpecificOutput.TailToolCallRequest != nil || ans.Reason == "" {
		t.Errorf("a result with an image was rewritten: %s", ans.Output)
	}
}

// What the hook lets through answers "{}" (never nothing: Gemini would
// show the user its stderr), with the reason.
func TestGeminiPass(t *testing.T) {
	o := Options{RunsDir: t.TempDir()}
	temp := t.TempDir()
	big := numbers(30000)
	for name, in := range map[string]string{
		"small":     geminiIn(t, temp, "AfterTool", "run_shell_command", map[string]any{"command": "ls"}, shellResponse("a\nb", "\nProcess Group PGID: 9")),
		"cancelled": geminiIn(t, temp, "AfterTool", "run_shell_command", map[string]any{"command": "x"}, map[string]any{"llmContent": "<untrusted_context>\nCommand was cancelled by user before it could complete. Below is the output before it was cancelled:\n" + big + "\n</untrusted_context>"}),
		"escape":    geminiIn(t, temp, "AfterTool", "run_shell_command", map[string]any{"command": "x"}, shellResponse(big+"&lt;/untrusted_context&gt;", "")),
		"error":     geminiIn(t, temp, "AfterTool", "run_shell_command", map[string]any{"command": "x"}, map[string]any{"llmContent": "<untrusted_context>\nOutput: " + big + "\n</untrusted_context>", "error": map[string]any{"message": "m", "type": "t"}}),
		"read_file": geminiIn(t, temp, "AfterTool", "read_file", map[string]any{"file_path": "/x"}, map[string]any{"llmContent": big}),
		"notify":    geminiIn(t, temp, "Notification", "", nil, nil),
		"no refs":   geminiIn(t, temp, "BeforeTool", "run_shell_command", map[string]any{"command": "seq 1 9"}, nil),
	} {
		out, ans := runGemini(t, in, o)
		if string(ans.Output) != "{}\n" || ans.Reason == "" || ans.Descriptor != nil {
			t.Errorf("%s: answered %q (%+v), reason %q", name, ans.Output, out, ans.Reason)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(temp, "tool-outputs")); len(entries) > 0 {
		t.Errorf("a stub file was written for an output let through")
	}
}

// Malformed input is an error and no answer: the caller prints nothing,
// so Gemini runs the call and shows its output as it is.
func TestGeminiMalformed(t *testing.T) {
	agent, _ := Lookup("gemini-cli")
	for _, in := range []string{"garbage", `{"hook_event_name": "AfterTool"}`,
		`{"hook_event_name": "AfterTool", "session_id": "s", "tool_name": "run_shell_command", "tool_input": {}, "tool_response": {"llmContent": 7}}`,
		`{"hook_event_name": "AfterTool", "session_id": "s", "tool_name": "mcp_a_b", "tool_input": {}, "tool_response": {"llmContent": "text"}}`} {
		ans, err := Run(agent, strings.NewReader(in), storeOf(t))
		if len(ans.Output) > 0 || err == nil {
			t.Errorf("%s: answered %s (%v)", in, ans.Output, err)
		}
	}
}

// BeforeTool expands references (an MCP tool's bare nodes too) into
// tool_input, with no decision — Gemini's policy judges the expanded
// call —, denies a call whose reference fails, and with --wrap-shell runs
// a shell command through retval exec. SessionStart teaches the form.
func TestGeminiBeforeTool(t *testing.T) {
	o := storeOf(t)
	out, _ := runGemini(t, geminiIn(t, "", "BeforeTool", "write_file", map[string]any{"file_path": "/x", "content": expand.Prefix + `{"$ref": "v1", "lines": [3, 4]}`}, nil), o)
	if out.Decision != "" || out.HookSpecificOutput.HookEventName != "BeforeTool" || string(out.HookSpecificOutput.ToolInput) != `{"content":"3\n4\n","file_path":"/x"}` {
		t.Errorf("write_file: %+v %s", out, out.HookSpecificOutput.ToolInput)
	}
	out, _ = runGemini(t, geminiIn(t, "", "BeforeTool", "mcp_fs_write_file", map[string]any{"content": map[string]any{"$ref": "v1", "lines": []int{5, 5}}}, nil), o)
	if string(out.HookSpecificOutput.ToolInput) != `{"content":"5\n"}` {
		t.Errorf("mcp bare node: %s", out.HookSpecificOutput.ToolInput)
	}
	out, _ = runGemini(t, geminiIn(t, "", "BeforeTool", "run_shell_command", map[string]any{"command": expand.Prefix + `{"$ref": "nope"}`}, nil), o)
	if out.Decision != "deny" || !strings.Contains(out.Reason, `at "/command"`) || !strings.Contains(out.Reason, "(unknown_reference)") || len(out.HookSpecificOutput.ToolInput) > 0 {
		t.Errorf("bad reference: %+v", out)
	}

	o.WrapShell, o.Exe = true, "/opt/retval"
	out, _ = runGemini(t, geminiIn(t, "", "BeforeTool", "run_shell_command", map[string]any{"command": "seq 1 100000", "description": "d"}, nil), o)
	var args struct{ Command, Description string }
	json.Unmarshal(out.HookSpecificOutput.ToolInput, &args)
	id := geminiCallID(geminiInput{ToolName: "run_shell_command", Timestamp: geminiTime, ToolInput: json.RawMessage(`{"command":"seq 1 100000","description":"d"}`)})
	want := "/opt/retval exec --runs-dir " + o.RunsDir + " --run sess --call " + id + " --tool run_shell_command -- bash -c 'seq 1 100000'"
	if args.Command != want || args.Description != "d" {
		t.Errorf("wrapped %q, want %q", args.Command, want)
	}

	out, _ = runGemini(t, geminiIn(t, "", "SessionStart", "", nil, nil), o)
	if out.HookSpecificOutput.HookEventName != "SessionStart" || out.HookSpecificOutput.AdditionalContext != expand.Instructions {
		t.Errorf("SessionStart: %+v", out)
	}
	// A call that ran with its reference unexpanded is flagged.
	out, _ = runGemini(t, geminiIn(t, "", "AfterTool", "write_file", map[string]any{"content": expand.Prefix + `{"$ref": "v1"}`}, map[string]any{"llmContent": "ok"}), o)
	if !strings.Contains(out.HookSpecificOutput.AdditionalContext, `"/content"`) {
		t.Errorf("unexpanded: %+v", out)
	}
}

// The call id is the input's: the same for the same input, another for
// other arguments or another time; a subagent's transcript (in a
// directory of chats/) finds the same temp directory.
func TestGeminiCallIDAndStubPath(t *testing.T) {
	base := geminiInput{SessionID: "sess", ToolName: "mcp_a_server_with_a_very_long_name_tool", Timestamp: geminiTime, ToolInput: json.RawMessage(`{"a":1}`)}
	id := geminiCallID(base)
	other := base
	other.ToolInput = json.RawMessage(`{"a":2}`)
	later := base
	later.Timestamp = "2026-12-04T05:35:05.681Z"
	if geminiCallID(base) != id || geminiCallID(other) == id || geminiCallID(later) == id || !strings.HasPrefix(id, "mcp_a_server_with_a_very-20261204T053505680Z-") {
		t.Errorf("ids %q %q %q", id, geminiCallID(other), geminiCallID(later))
	}
	for transcript, want := range map[string]string{
		"/h/.gemini/tmp/p/chats/session-x.jsonl":        "/h/.gemini/tmp/p/tool-outputs/session-sess/retval-c.txt",
		"/h/.gemini/tmp/p/chats/parent/session-y.jsonl": "/h/.gemini/tmp/p/tool-outputs/session-sess/retval-c.txt",
		"/h/.gemini/tmp/chats/chats/session-z.jsonl":    "/h/.gemini/tmp/chats/tool-outputs/session-sess/retval-c.txt",
		"/h/elsewhere/session-x.jsonl":                  "",
		"relative/chats/session-x.jsonl":                "",
		"":                                              "",
	} {
		p, ok := geminiStubPath(geminiInput{SessionID: "sess", TranscriptPath: transcript}, Call{ID: "c"})
		if p != want || ok != (want != "") {
			t.Errorf("%q: %q %v, want %q", transcript, p, ok, want)
		}
	}
	if _, ok := geminiStubPath(geminiInput{SessionID: "../x", TranscriptPath: "/t/chats/s.jsonl"}, Call{ID: "c"}); ok {
		t.Error("a session id that is not a clean name made a path")
	}
}

// read_file shows a text exactly only within its limits; beyond them the
// stub is given as a denial's reason instead.
func TestGeminiReadFileLimits(t *testing.T) {
	for text, want := range map[string]bool{
		"a\nb\n":                    true,
		strings.Repeat("x", 2000):   true,
		strings.Repeat("x", 2001):   false,
		strings.Repeat("l\n", 1999): true,
		strings.Repeat("l\n", 2000): false,
		"a\r\nb":                    false,
		"a\x00b":                    false,
	} {
		if got := readFileShowsExactly(text); got != want {
			t.Errorf("%.20q (%d bytes): %v, want %v", text, len(text), got, want)
		}
	}
}

// The settings files: the user's under GEMINI_CLI_HOME when set (Gemini
// takes it for the home directory); install and uninstall there round-trip
// a file byte for byte; a file with comments (which Gemini strips) is
// refused with where, and left as it is.
func TestGeminiSettings(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GEMINI_CLI_HOME", home)
	p, err := GeminiUserSettings()
	if err != nil || p != filepath.Join(home, ".gemini", "settings.json") {
		t.Fatalf("%q %v", p, err)
	}
	orig := "{\n  \"security\": {\n    \"auth\": {\n      \"selectedType\": \"gemini-api-key\"\n    }\n  },\n  \"hooks\": {\n    \"AfterTool\": [\n      {\n        \"matcher\": \"write_file\",\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"prettier\"\n          }\n        ]\n      }\n    ]\n  }\n}\n"
	write(t, p, orig)
	cmd := "/usr/local/bin/retval hook gemini-cli"
	if _, err := GeminiSettings.Install(InstallOptions{Hooks: p, Command: cmd}); err != nil {
		t.Fatal(err)
	}
	var s struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct{ Type, Command string }
		} `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(read(t, p)), &s); err != nil {
		t.Fatal(err)
	}
	for event, matcher := range map[string]string{"BeforeTool": GeminiBeforeMatcher, "AfterTool": GeminiAfterMatcher, "SessionStart": ""} {
		groups := s.Hooks[event]
		last := groups[len(groups)-1]
		if last.Matcher != matcher || len(last.Hooks) != 1 || last.Hooks[0].Command != cmd || last.Hooks[0].Type != "command" {
			t.Errorf("%s: %+v", event, groups)
		}
	}
	if _, err := os.Stat(p + BackupSuffix); err != nil {
		t.Errorf("no backup: %v", err)
	}
	if _, err := GeminiSettings.Uninstall(UninstallOptions{Hooks: p}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, p); got != orig {
		t.Errorf("after uninstall:\n%s\nwant\n%s", got, orig)
	}

	commented := "{\n  // my key\n  \"security\": {}\n}\n"
	write(t, p, commented)
	_, err = GeminiSettings.Install(InstallOptions{Hooks: p, Command: cmd})
	if err == nil || !strings.Contains(err.Error(), "line 2, column 3") {
		t.Errorf("a file with a comment: %v", err)
	}
	if read(t, p) != commented {
		t.Error("a refused file was changed")
	}
}

// Gemini keeps at most the last 16 MB of an output and says so in a last
// line of its own: the value is a tail, and its stub says partial, never
// complete.
func TestGeminiShellTruncatedIsPartial(t *testing.T) {
	o := Options{RunsDir: t.TempDir()}
	temp := t.TempDir()
	value := strings.TrimSuffix(numbers(100000), "\n") + "\n[GEMINI_CLI_WARNING: Output truncated. The buffer is limited to 16MB.]"
	in := geminiIn(t, temp, "AfterTool", "run_shell_command", map[string]any{"command": "yes | head -c 20000000"},
		shellResponse(value, "\nProcess Group PGID: 4242"))
	out, _ := runGemini(t, in, o)
	text := shown(t, out)
	if !strings.Contains(text, "partial: upstream kept the last ") || strings.Contains(text, ", complete") {
		t.Fatalf("the model sees %q", text[:min(len(text), 300)])
	}
	id := geminiCallID(geminiInput{ToolName: "run_shell_command", Timestamp: geminiTime, ToolInput: json.RawMessage(`{"command":"yes | head -c 20000000"}`)})
	got, d := stored(t, o.RunsDir, "sess", id)
	if got != value || d.Complete {
		t.Fatalf("stored %d bytes, complete %v", len(got), d.Complete)
	}
	// A line that only mentions the warning is not Gemini's cut.
	for v, want := range map[string]bool{
		"[GEMINI_CLI_WARNING: Output truncated. The buffer is limited to 16MB.]":                  true,
		"x\n[GEMINI_CLI_WARNING: Output truncated. The buffer is limited to 16MB.] and more text": false,
		"[GEMINI_CLI_WARNING: Output truncated. The buffer is limited to 16MB.]\nx":               false,
	} {
		if geminiTruncated(v) != want {
			t.Errorf("geminiTruncated(%q) = %v", v, !want)
		}
	}
}
