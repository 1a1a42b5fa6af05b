package hook

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retval/retval/internal/testenv"

	"github.com/retval/retval/pkg/retain"
)

func numbers(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// bashInput is a PostToolUse input of the Bash tool.
func bashInput(t *testing.T, session, id string, resp map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"session_id": session, "hook_event_name": "PostToolUse",
		"tool_name": "Bash", "tool_use_id": id, "tool_input": map[string]any{"command": "seq 1 20000"}, "tool_response": resp})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mcpInput(t *testing.T, id string, resp any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"session_id": "sess", "hook_event_name": "PostToolUse",
		"tool_name": "mcp__filesystem__read_text_file", "tool_use_id": id, "tool_response": resp,
		"mcp_server": map[string]any{"name": "filesystem"}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// answerOf decodes a hook answer.
type answerOf struct {
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		UpdatedToolOutput *struct {
			Stdout      string `json:"stdout"`
			Stderr      string `json:"stderr"`
			Interrupted bool   `json:"interrupted"`
		} `json:"updatedToolOutput"`
		UpdatedMCPToolOutput *string `json:"updatedMCPToolOutput"`
	} `json:"hookSpecificOutput"`
}

func decode(t *testing.T, out []byte) answerOf {
	t.Helper()
	var a answerOf
	if err := json.Unmarshal(out, &a); err != nil {
		t.Fatalf("answer is not JSON: %v: %s", err, out)
	}
	if a.HookSpecificOutput.HookEventName != "PostToolUse" {
		t.Fatalf("hookEventName: %s", out)
	}
	return a
}

// stored returns the bytes retained for call in run.
func stored(t *testing.T, dir, run, call string) (string, *retain.Descriptor) {
	t.Helper()
	v, err := retain.Open(dir).OpenValue(run, call)
	if err != nil {
		t.Fatalf("value %s/%s: %v", run, call, err)
	}
	defer v.Close()
	b, err := v.Bytes(0, v.Size())
	if err != nil {
		t.Fatal(err)
	}
	return string(b), &v.Desc
}

func TestBashInlineStdout(t *testing.T) {
	dir := t.TempDir()
	out := numbers(5000) // 23,893 bytes: over the threshold, under Claude Code's cut
	ans, err := ClaudeCode(strings.NewReader(bashInput(t, "sess", "toolu_1", map[string]any{"stdout": out, "stderr": "", "interrupted": false})), Options{RunsDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	a := decode(t, ans.Output)
	u := a.HookSpecificOutput.UpdatedToolOutput
	if u == nil || a.HookSpecificOutput.UpdatedMCPToolOutput != nil {
		t.Fatalf("want updatedToolOutput alone: %s", ans.Output)
	}
	if !strings.HasPrefix(u.Stdout, "[retained #toolu_1] 23893 bytes, 5000 lines, sha256:"+sha(out)+", complete\n") {
		t.Errorf("stub: %q", u.Stdout)
	}
	lines := strings.Split(strings.TrimSuffix(u.Stdout, "\n"), "\n")
	want := "retval peek --runs-dir " + dir + " --run sess toolu_1 --lines "
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, want) || !strings.HasSuffix(last, "  # read more, or: --query TEXT instead of --lines") {
		t.Errorf("last line %q: want the shell command %q…", last, want)
	}
	if u.Stderr != "" || u.Interrupted {
		t.Errorf("stderr %q interrupted %v", u.Stderr, u.Interrupted)
	}
	if strings.Contains(string(ans.Output), "persisted") {
		t.Errorf("answer names a persisted output: %s", ans.Output)
	}
	got, d := stored(t, dir, "sess", "toolu_1")
	if got != out || d.Tool != "Bash" || d.TimedOut {
		t.Errorf("stored %d bytes, tool %q, timed out %v", len(got), d.Tool, d.TimedOut)
	}
}

// Claude Code cuts stdout to 30,000 characters and writes the whole output
// to persistedOutputPath: the value is the file, never the cut copy.
func TestBashPersistedOutput(t *testing.T) {
	dir := t.TempDir()
	full := numbers(20000)
	p := filepath.Join(t.TempDir(), "b6gt8x8ee.txt")
	if err := os.WriteFile(p, []byte(full), 0o600); err != nil {
		t.Fatal(err)
	}
	in := bashInput(t, "sess", "toolu_2", map[string]any{"stdout": full[:30000], "stderr": "", "interrupted": true,
		"persistedOutputPath": p, "persistedOutputSize": len(full)})
	ans, err := ClaudeCode(strings.NewReader(in), Options{RunsDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	u := decode(t, ans.Output).HookSpecificOutput.UpdatedToolOutput
	if !strings.HasPrefix(u.Stdout, fmt.Sprintf("[retained #toolu_2] %d bytes, 20000 lines, sha256:%s, complete, timed out\n", len(full), sha(full))) {
		t.Errorf("stub: %q", u.Stdout)
	}
	if !u.Interrupted {
		t.Error("interrupted was not kept")
	}
	if len(ans.Output) > 2048 {
		t.Errorf("answer is %d bytes", len(ans.Output))
	}
	got, d := stored(t, dir, "sess", "toolu_2")
	if got != full || !d.TimedOut {
		t.Errorf("stored %d bytes (want %d), timed out %v", len(got), len(full), d.TimedOut)
	}
}

// The persisted output is a file Claude Code wrote; whatever is there, the
// hook never blocks on it, never follows a symlink, never reads past its
// bound, and passes (no answer) when it cannot read it.
func TestBashPersistedOutputHostile(t *testing.T) {
	tmp := t.TempDir()
	fifo := filepath.Join(tmp, "fifo")
	testenv.Mkfifo(t, fifo)
	real := filepath.Join(tmp, "real.txt")
	os.WriteFile(real, []byte(numbers(20000)), 0o600)
	link := filepath.Join(tmp, "link.txt")
	os.Symlink(real, link)
	for _, c := range []struct {
		name, path, wantErr, wantReason string
		opts                            Options
	}{
		{name: "fifo", path: fifo, wantErr: "is not a regular file"},
		{name: "device", path: "/dev/zero", wantErr: "is not a regular file"},
		{name: "symlink", path: link, wantErr: "persistedOutputPath " + link + " is a symlink: the whole output is read only from a plain file"},
		{name: "missing", path: filepath.Join(tmp, "gone"), wantErr: "no such file"},
		{name: "relative", path: "real.txt", wantErr: "not absolute"},
		{name: "too big", path: real, opts: Options{Limits: retain.Limits{MaxValueSize: 1000}}, wantReason: "exceed max-value-size 1000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.opts.RunsDir = filepath.Join(tmp, "runs")
			in := bashInput(t, "sess", "toolu_"+strings.ReplaceAll(c.name, " ", ""), map[string]any{"stdout": strings.Repeat("x", 30000), "stderr": "", "interrupted": false, "persistedOutputPath": c.path})
			done := make(chan struct{})
			var ans Answer
			var err error
			go func() {
				defer close(done)
				ans, err = ClaudeCode(strings.NewReader(in), c.opts)
			}()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				t.Fatal("the hook blocked")
			}
			if len(ans.Output) > 0 {
				t.Errorf("answered %s", ans.Output)
			}
			if c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Errorf("error %v, want %q", err, c.wantErr)
			}
			if c.wantReason != "" && (err != nil || !strings.Contains(ans.Reason, c.wantReason)) {
				t.Errorf("reason %q error %v, want %q", ans.Reason, err, c.wantReason)
			}
		})
	}
}

func TestBashStderr(t *testing.T) {
	dir := t.TempDir()
	out := numbers(5000)
	// Small stderr is kept as it is.
	ans, err := ClaudeCode(strings.NewReader(bashInput(t, "sess", "a", map[string]any{"stdout": out, "stderr": "warning: x\n", "interrupted": false})), Options{RunsDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if u := decode(t, ans.Output).HookSpecificOutput.UpdatedToolOutput; u.Stderr != "warning: x\n" {
		t.Errorf("stderr %q", u.Stderr)
	}
	// Large stderr is retained as its own value and shown as its stub.
	big := strings.Repeat("error line\n", 3000)
	ans, err = ClaudeCode(strings.NewReader(bashInput(t, "sess", "b", map[string]any{"stdout": out, "stderr": big, "interrupted": false})), Options{RunsDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	u := decode(t, ans.Output).HookSpecificOutput.UpdatedToolOutput
	if !strings.HasPrefix(u.Stderr, "[retained #b-stderr] 33000 bytes, 3000 lines") || !strings.Contains(u.Stderr, "--run sess b-stderr --lines") {
		t.Errorf("stderr %q", u.Stderr)
	}
	if got, d := stored(t, dir, "sess", "b-stderr"); got != big || d.Tool != "Bash stderr" {
		t.Errorf("stderr value: %d bytes, tool %q", len(got), d.Tool)
	}
	// Small stdout with large stderr: stderr is retained all the same,
	// and stdout shown as it is.
	ans, err = ClaudeCode(strings.NewReader(bashInput(t, "sess", "c", map[string]any{"stdout": "ok\n", "stderr": big, "interrupted": false})), Options{RunsDir: dir})
	if err != nil || len(ans.Output) == 0 {
		t.Fatalf("no answer for a big stderr: %q %v", ans.Reason, err)
	}
	u = decode(t, ans.Output).HookSpecificOutput.UpdatedToolOutput
	if u.Stdout != "ok\n" || !strings.HasPrefix(u.Stderr, "[retained #c-stderr] 33000 bytes, 3000 lines") {
		t.Errorf("stdout %q, stderr %.80q", u.Stdout, u.Stderr)
	}
	if got, _ := stored(t, dir, "sess", "c-stderr"); got != big {
		t.Errorf("stderr value: %d bytes", len(got))
	}
}

func TestMCPDecodedText(t *testing.T) {
	dir := t.TempDir()
	text := strings.ReplaceAll(numbers(15000), "\n", " lorem\n")
	result, _ := json.Marshal(map[string]string{"content": text})
	ans, err := ClaudeCode(strings.NewReader(mcpInput(t, "toolu_m", string(result))), Options{RunsDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	a := decode(t, ans.Output)
	if a.HookSpecificOutput.UpdatedToolOutput != nil || a.HookSpecificOutput.UpdatedMCPToolOutput == nil {
		t.Fatalf("want updatedMCPToolOutput, a string: %s", ans.Output)
	}
	stub := *a.HookSpecificOutput.UpdatedMCPToolOutput
	if !strings.HasPrefix(stub, fmt.Sprintf("[retained #toolu_m] %d bytes, 15000 lines, sha256:%s, complete\n1 lorem\n", len(text), sha(text))) {
		t.Errorf("stub: %q", stub)
	}
	if !strings.HasSuffix(stub, "[the value is the text of member \"content\", decoded from the result's JSON]\n") {
		t.Errorf("stub does not say where the text came from: %q", stub)
	}
	got, d := stored(t, dir, "sess", "toolu_m")
	if got != text || d.Tool != "mcp__filesystem__read_text_file" {
		t.Errorf("stored %d bytes, tool %q", len(got), d.Tool)
	}
}

func TestMCPOtherResults(t *testing.T) {
	text := numbers(8000)
	twoMembers, _ := json.Marshal(map[string]any{"content": text, "size": 1})
	blocks, _ := json.Marshal([]map[string]string{{"type": "text", "text": text}, {"type": "text", "text": "end"}})
	for _, c := range []struct {
		name     string
		resp     any
		want     string
		wantNote string
	}{
		{"plain text", text, text, ""},
		{"two members: JSON as is", string(twoMembers), string(twoMembers), ""},
		{"text blocks", string(blocks), text + "\nend", "[the value is the text of the result's 2 text blocks joined by newlines, decoded from the result's JSON]\n"},
		{"blocks as JSON, not a string", json.RawMessage(blocks), text + "\nend", "2 text blocks"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			ans, err := ClaudeCode(strings.NewReader(mcpInput(t, "m1", c.resp)), Options{RunsDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			stub := *decode(t, ans.Output).HookSpecificOutput.UpdatedMCPToolOutput
			if got, _ := stored(t, dir, "sess", "m1"); got != c.want {
				t.Errorf("stored %.80q…, want %.80q…", got, c.want)
			}
			if c.wantNote == "" && strings.Contains(stub, "[the value is") {
				t.Errorf("a note for a value retained as it is: %q", stub)
			}
			if c.wantNote != "" && !strings.Contains(stub, c.wantNote) {
				t.Errorf("stub %q lacks %q", stub, c.wantNote)
			}
		})
	}
}

// Whatever the hook does not answer leaves Claude Code's output: no
// Output, and a reason or an error that says why.
func TestPass(t *testing.T) {
	big := numbers(5000)
	for _, c := range []struct {
		name, in, want string
		opts           Options
	}{
		{name: "small", in: bashInput(t, "s", "c", map[string]any{"stdout": "hello\n", "stderr": "", "interrupted": false}), want: "within the threshold"},
		{name: "off", in: bashInput(t, "s", "c", map[string]any{"stdout": big}), opts: Options{Off: true}, want: "retval is off"},
		{name: "other tool", in: `{"session_id":"s","tool_use_id":"c","tool_name":"Read","tool_response":{"file":{}}}`, want: `tool "Read" is not one the hook handles`},
		{name: "other event", in: `{"session_id":"s","tool_use_id":"c","hook_event_name":"Notification","tool_name":"Bash","tool_response":{}}`, want: "only SessionStart, PreToolUse and PostToolUse"},
		{name: "image", in: bashInput(t, "s", "c", map[string]any{"stdout": big, "isImage": true}), want: "an image"},
		{name: "not JSON", in: "garbage", want: "not a JSON object"},
		{name: "no stdout", in: bashInput(t, "s", "c", map[string]any{"stderr": big}), want: "no stdout"},
		{name: "no session", in: bashInput(t, "", "c", map[string]any{"stdout": big}), want: "lacks session_id"},
		{name: "no response", in: `{"session_id":"s","tool_use_id":"c","tool_name":"Bash"}`, want: "no tool_response"},
		{name: "over the input bound", in: bashInput(t, "s", "c", map[string]any{"stdout": big}), opts: Options{MaxInput: 1000}, want: "over 1000 bytes"},
		{name: "capacity", in: bashInput(t, "s", "c", map[string]any{"stdout": big}), opts: Options{Limits: retain.Limits{MaxValueSize: 21000}}, want: "not retained"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "runs")
			if c.opts.RunsDir == "" {
				c.opts.RunsDir = dir
			}
			ans, err := ClaudeCode(strings.NewReader(c.in), c.opts)
			if len(ans.Output) > 0 {
				t.Fatalf("answered %s", ans.Output)
			}
			said := ans.Reason
			if err != nil {
				said = err.Error()
			}
			if !strings.Contains(said, c.want) {
				t.Errorf("said %q, want %q", said, c.want)
			}
			if c.name != "capacity" {
				if _, err := os.Stat(dir); err == nil {
					t.Errorf("a store was written")
				}
			}
		})
	}
}

// A store that cannot be written: no answer (a stub would point at
// nothing), and no error escapes as a broken tool call.
func TestStoreUnwritable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs")
	os.WriteFile(dir, []byte("a file where the store should be"), 0o600)
	ans, err := ClaudeCode(strings.NewReader(bashInput(t, "s", "c", map[string]any{"stdout": numbers(5000)})), Options{RunsDir: dir})
	if len(ans.Output) > 0 || err == nil {
		t.Errorf("answered %q, error %v", ans.Output, err)
	}
}

// The run is the session id, sanitized as every run id.
func TestSessionSanitized(t *testing.T) {
	dir := t.TempDir()
	ans, err := ClaudeCode(strings.NewReader(bashInput(t, "../../etc", "toolu_x", map[string]any{"stdout": numbers(5000)})), Options{RunsDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	run, _ := retain.Sanitize("../../etc")
	if _, d := stored(t, dir, string(run), "toolu_x"); string(d.Run) != string(run) {
		t.Errorf("run %q", d.Run)
	}
	if u := decode(t, ans.Output).HookSpecificOutput.UpdatedToolOutput; !strings.Contains(u.Stdout, "--run "+string(run)+" ") {
		t.Errorf("stub: %q", u.Stdout)
	}
}

func TestDefaultRunsDir(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	t.Setenv("XDG_STATE_HOME", "")
	if got := DefaultRunsDir(); got != "/home/u/.local/state/retval/runs" {
		t.Errorf("got %q", got)
	}
	t.Setenv("XDG_STATE_HOME", "/state")
	if got := DefaultRunsDir(); got != "/state/retval/runs" {
		t.Errorf("got %q", got)
	}
	t.Setenv("XDG_STATE_HOME", "rel")
	if got := DefaultRunsDir(); got != "/home/u/.local/state/retval/runs" {
		t.Errorf("a relative XDG_STATE_HOME: got %q", got)
	}
	t.Setenv("HOME", "")
	if got := DefaultRunsDir(); got != "" {
		t.Errorf("no HOME: got %q", got)
	}
}

func TestPayload(t *testing.T) {
	for _, c := range []struct{ in, want, from string }{
		{`{"content":"a\nb"}`, "a\nb", `the text of member "content"`},
		{` {"text": "x"} `, "x", `the text of member "text"`},
		{`{"content":[{"type":"text","text":"a"}]}`, "a", `the text of member "content" (1 text block)`},
		{`[{"type":"text","text":"a"},{"type":"text","text":"b"}]`, "a\nb", "the text of the result's 2 text blocks joined by newlines"},
		{`{"content":"a","b":"c"}`, `{"content":"a","b":"c"}`, ""},
		{`{"a":"x","a":"y"}`, `{"a":"x","a":"y"}`, ""},
		{`{"n":1}`, `{"n":1}`, ""},
		{`[{"type":"text","text":"a","annotations":{}}]`, `[{"type":"text","text":"a","annotations":{}}]`, ""},
		{`[{"type":"image","data":"AA=="}]`, `[{"type":"image","data":"AA=="}]`, ""},
		{`[]`, `[]`, ""},
		{`{"c":"\ud800"}`, `{"c":"\ud800"}`, ""},
		{`{"c":"\ufffd"}`, "\ufffd", `the text of member "c"`},
		{`not json`, `not json`, ""},
		{`"a string"`, `"a string"`, ""},
	} {
		got, from := Payload([]byte(c.in))
		if string(got) != c.want || from != c.from {
			t.Errorf("Payload(%s) = %q, %q; want %q, %q", c.in, got, from, c.want, c.from)
		}
	}
}
