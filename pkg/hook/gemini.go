package hook

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/retval/retval/pkg/expand"
	"github.com/retval/retval/pkg/retain"
)

// Gemini CLI's side of the seam: its command hooks BeforeTool, AfterTool
// and SessionStart in settings.json, their input and answer, and how the
// model is made to see a stub.
//
// Gemini CLI has no hook answer that replaces a tool's output. Its
// AfterTool hook receives the output whole (before Gemini cuts it to 40,000
// characters), and may answer with a tail call, another tool call whose
// result the model sees instead, under the first call's name and id, as a
// success. So a big output is retained, its stub is written to a file in
// Gemini's own project temp directory (beside the whole outputs Gemini
// saves there itself, and removed with them when Gemini cleans up the
// session), and the tail call is Gemini's read_file of that file — a
// read-only tool that Gemini's default policy allows in every approval
// mode, of a file inside the directory read_file may read. Nothing else is
// approved or run, and no command is rewritten, so the commands a user is
// asked to approve are the ones they would be asked about without retval.
// Where no such file can be written, or read_file would not show it
// exactly, the answer is a denial whose reason is the stub: the model sees
// exactly that, but as the call's error.
//
// What is retained is the output as Gemini captured it: its shell tool
// strips ANSI escapes and trims the output (without a terminal) or renders
// it through a terminal (in an interactive session). With --wrap-shell the
// BeforeTool hook runs each shell command through retval exec instead, so
// the command's stream is retained byte for byte — but Gemini then checks
// its approval rules against the rewritten command (see docs/gemini.md).
//
// The hook input has no id of the tool call: the call's id is derived from
// the input (see geminiCallID), so that answering the same input again
// gives the same id and the same stub.

func init() { register(geminiCLI{}) }

type geminiCLI struct{}

func (geminiCLI) Name() string              { return "gemini-cli" }
func (geminiCLI) ReadMore() retain.ReadMore { return retain.ReadMoreShell }
func (geminiCLI) Settings() *Settings       { return GeminiSettings }

// The tools the hooks are for. Gemini matches a hook's matcher as an
// unanchored regular expression against the tool's name, so these are
// anchored: "mcp_" alone would match read_mcp_resource too.
const (
	// GeminiBeforeMatcher: the tools whose input may hold references.
	GeminiBeforeMatcher = "^(run_shell_command|write_file|replace|mcp_.+)$"
	// GeminiAfterMatcher: the tools whose output is retained, and those
	// whose input may hold references (a call that ran with one
	// unexpanded is flagged).
	GeminiAfterMatcher = GeminiBeforeMatcher
)

// Gemini's names of its tools.
const (
	geminiShell    = "run_shell_command"
	geminiReadFile = "read_file"
	geminiMCP      = "mcp_"
)

// GeminiSettings is what retval adds to a Gemini CLI settings file: the
// BeforeTool hook (expanding references; with --wrap-shell, running shell
// commands through retval exec), the AfterTool hook (retaining big shell
// and MCP outputs) and SessionStart (teaching the reference form once).
var GeminiSettings = &Settings{
	Agent: "Gemini CLI",
	Name:  "gemini-cli",
	Hooks: []HookEntry{{Event: "BeforeTool", Matcher: GeminiBeforeMatcher}, {Event: "AfterTool", Matcher: GeminiAfterMatcher},
		{Event: "SessionStart"}},
	UserFile:    GeminiUserSettings,
	ProjectFile: func(dir string) (string, error) { return projectFile(dir, ".gemini", "settings.json") },
}

// GeminiUserSettings is the user's Gemini CLI settings file:
// $GEMINI_CLI_HOME/.gemini/settings.json when that is set (Gemini takes
// it for the home directory), else ~/.gemini/settings.json.
func GeminiUserSettings() (string, error) {
	if d := os.Getenv("GEMINI_CLI_HOME"); d != "" {
		return filepath.Abs(filepath.Join(d, ".gemini", "settings.json"))
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home directory: set HOME or GEMINI_CLI_HOME, or use --project DIR")
	}
	return filepath.Join(home, ".gemini", "settings.json"), nil
}

// geminiInput is the part of a Gemini CLI hook input the hook reads.
type geminiInput struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	HookEventName  string          `json:"hook_event_name"`
	Timestamp      string          `json:"timestamp"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolResponse   *struct {
		// LLMContent is what the model is to see: a string (the shell
		// tool's) or a list of parts (an MCP tool's).
		LLMContent json.RawMessage `json:"llmContent"`
		Error      json.RawMessage `json:"error"`
	} `json:"tool_response"`
}

// geminiOutput is a hook's answer. Gemini reads an answer from stdout,
// and when stdout is empty from stderr, as a message to show the user: so
// an answer that changes nothing is "{}", never nothing.
type geminiOutput struct {
	Decision           string           `json:"decision,omitempty"`
	Reason             string           `json:"reason,omitempty"`
	HookSpecificOutput *geminiSpecifics `json:"hookSpecificOutput,omitempty"`
}

type geminiSpecifics struct {
	HookEventName string `json:"hookEventName"`
	// AdditionalContext reaches the model: at SessionStart before the
	// prompt, after AfterTool appended to the tool's output.
	AdditionalContext string `json:"additionalContext,omitempty"`
	// ToolInput (BeforeTool) replaces the call's arguments.
	ToolInput json.RawMessage `json:"tool_input,omitempty"`
	// TailToolCallRequest (AfterTool) runs another tool whose result
	// replaces this one's.
	TailToolCallRequest *geminiToolCall `json:"tailToolCallRequest,omitempty"`
}

type geminiToolCall struct {
	Name string         `json:"name"`
	Args map[string]any `json:"args"`
}

func (geminiCLI) Answer(h *Hook, b []byte) (Answer, error) {
	// llmContent, which may be megabytes, is taken as a slice of the
	// input, and returnDisplay (the same text again) is not decoded (see
	// decodeMembers).
	var in geminiInput
	if _, ok := decodeMembers(b, &in); !ok {
		if err := json.Unmarshal(b, &in); err != nil {
			return Answer{}, fmt.Errorf("the hook input is not a JSON object: %v", err)
		}
	}
	switch in.HookEventName {
	case "SessionStart":
		return geminiAnswer(geminiOutput{HookSpecificOutput: &geminiSpecifics{HookEventName: "SessionStart", AdditionalContext: expand.Instructions}}, nil, "")
	case "BeforeTool", "AfterTool":
	default:
		return geminiAnswer(geminiOutput{}, nil, fmt.Sprintf("a %q hook input: only SessionStart, BeforeTool and AfterTool are answered", in.HookEventName))
	}
	if in.SessionID == "" || in.ToolName == "" {
		return Answer{}, errors.New("the hook input lacks session_id or tool_name")
	}
	call := Call{Run: in.SessionID, ID: geminiCallID(in), Tool: in.ToolName}
	if in.HookEventName == "BeforeTool" {
		return geminiBefore(h, call, in.ToolInput)
	}
	if paths := expand.Unexpanded(in.ToolInput); len(paths) > 0 {
		// The fail-open case: the call ran with its references as the
		// model wrote them (no BeforeTool hook expanded them).
		return geminiAnswer(geminiOutput{HookSpecificOutput: &geminiSpecifics{HookEventName: "AfterTool", AdditionalContext: unexpandedNote(paths)}}, nil, "")
	}
	if in.ToolResponse == nil {
		return Answer{}, errors.New("the hook input has no tool_response")
	}
	if len(in.ToolResponse.Error) > 0 && string(in.ToolResponse.Error) != "null" {
		return geminiAnswer(geminiOutput{}, nil, "the call failed: its error is shown as is")
	}
	content := in.ToolResponse.LLMContent
	switch {
	case in.ToolName == geminiShell:
		return geminiShellOutput(h, in, call, content)
	case strings.HasPrefix(in.ToolName, geminiMCP):
		return geminiMCPOutput(h, in, call, content)
	}
	return geminiAnswer(geminiOutput{}, nil, fmt.Sprintf("tool %q: its output is not retained (%s, %s*)", in.ToolName, geminiShell, geminiMCP))
}

// geminiBefore answers BeforeTool: a call whose arguments hold references
// gets them expanded (tool_input) — Gemini then checks its policy against
// the expanded call, so the hook grants nothing — and one whose reference
// fails is denied, naming each failure. With --wrap-shell a shell command
// is run through retval exec.
func geminiBefore(h *Hook, call Call, input json.RawMessage) (Answer, error) {
	if len(input) == 0 {
		return geminiAnswer(geminiOutput{}, nil, "no tool_input")
	}
	in, err := h.Expand(call, input, expand.InputOptions{Objects: strings.HasPrefix(call.Tool, geminiMCP)})
	if retain.CodeOf(err) == retain.CodeExpandRefused {
		return geminiAnswer(geminiOutput{Decision: "deny", Reason: refusalText(err)}, nil, "")
	}
	if err != nil {
		return Answer{}, err
	}
	doc := in.Doc
	if call.Tool == geminiShell && h.opts.WrapShell {
		if doc, err = h.wrapShell(call, doc); err != nil {
			return Answer{}, err
		}
	}
	if bytes.Equal(doc, input) {
		return geminiAnswer(geminiOutput{}, nil, "no $expand: reference in the tool input: run as it is")
	}
	return geminiAnswer(geminiOutput{HookSpecificOutput: &geminiSpecifics{HookEventName: "BeforeTool", ToolInput: doc}}, nil, "")
}

// geminiShellOutput retains run_shell_command's output. Gemini hands it
// over as the model would see it,
//
//	<untrusted_context>
//	Output: OUTPUT
//	Exit Code: N            (each of these only when there is one)
//	Signal: N
//	Background PIDs: N, …
//	Process Group PGID: N
//	</untrusted_context>
//
// The value is OUTPUT; the model sees the same envelope with the stub in
// its place, so what it is told of the exit stays as it was.
func geminiShellOutput(h *Hook, in geminiInput, call Call, content json.RawMessage) (Answer, error) {
	var s string
	if err := json.Unmarshal(content, &s); err != nil {
		return Answer{}, errors.New("the shell tool's llmContent is not a string")
	}
	text, ok := unwrapUntrusted(s)
	if !ok {
		return geminiAnswer(geminiOutput{}, nil, "not a command's output (cancelled, in the background, or summarized): shown as is")
	}
	rest, ok := strings.CutPrefix(text, "Output: ")
	if !ok {
		return geminiAnswer(geminiOutput{}, nil, "not a command's output (cancelled, in the background, or summarized): shown as is")
	}
	trailer := shellTrailer().FindString(rest)
	value := rest[:len(rest)-len(trailer)]
	shown, reason, err := h.Shell(call, Shell{Stdout: value, Partial: geminiTruncated(value), Note: geminiShellNote})
	if err != nil {
		return Answer{}, err
	}
	if shown == nil {
		return geminiAnswer(geminiOutput{}, nil, reason)
	}
	return geminiReplace(in, call, wrapUntrusted("Output: "+strings.TrimSuffix(shown.Stdout, "\n")+trailer), shown.Descriptor)
}

// geminiTruncated reports whether Gemini cut the output to its buffer's
// last bytes: it then ends the text with its warning line (Gemini CLI
// 0.61.0, ShellExecutionService: "[GEMINI_CLI_WARNING: Output truncated.
// The buffer is limited to 16MB.]"), and the value is a tail, not the
// whole output.
func geminiTruncated(value string) bool {
	last := value[strings.LastIndexByte(value, '\n')+1:]
	return strings.HasPrefix(last, "[GEMINI_CLI_WARNING: Output truncated.") && strings.HasSuffix(last, "]")
}

// geminiShellNote follows the stub of a shell command's output: the value
// is what Gemini hands AfterTool, which is not what the command wrote, and
// what it wrote cannot be recovered. Gemini reads stdout and stderr into
// one text, strips ANSI escapes and trims white space at both ends (or,
// in a terminal, keeps the terminal's text); the hook input carries that
// text twice (llmContent, returnDisplay) and nothing else of the output,
// and the file Gemini saves a long output in holds the same llmContent.
// So `seq 1 100000` is kept without its last newline, and its size and
// SHA-256 are not those of `seq 1 100000 | sha256sum`; --wrap-shell keeps
// the exact bytes.
const geminiShellNote = "[the value is the output as Gemini CLI captured it (stdout and stderr together, escapes removed, white space trimmed), not the command's exact bytes]\n"

// shellTrailer is what Gemini's shell tool adds after a command's output:
// the exit code, signal, background processes and process group, each on
// its own line and each only when there is one, in this order.
var shellTrailer = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(\nExit Code: -?\d+)?(\nSignal: [^\n]+)?(\nBackground PIDs: \d+(, \d+)*)?(\nProcess Group PGID: \d+)?\z`)
})

// geminiMCPOutput retains an MCP tool's text: Gemini hands over its
// content as parts, each text block in its own <untrusted_context>
// envelope. Big text blocks become stubs by the MCP proxy's rule (see
// Blocks); the model sees every block in its envelope, in order. A result
// with anything but text (images, audio, blobs, links) is shown as is: a
// tail call can give the model text alone.
func geminiMCPOutput(h *Hook, in geminiInput, call Call, content json.RawMessage) (Answer, error) {
	var parts []map[string]json.RawMessage
	if err := json.Unmarshal(content, &parts); err != nil {
		return Answer{}, errors.New("the MCP tool's llmContent is not a list of parts")
	}
	var blocks []json.RawMessage
	for _, p := range parts {
		var s string
		if len(p) != 1 || json.Unmarshal(p["text"], &s) != nil {
			return geminiAnswer(geminiOutput{}, nil, "the result holds more than text: shown as is")
		}
		text, ok := unwrapUntrusted(s)
		if !ok {
			return geminiAnswer(geminiOutput{}, nil, "the result holds more than the tool's text: shown as is")
		}
		b, err := encode(map[string]string{"type": "text", "text": text})
		if err != nil {
			return Answer{}, err
		}
		blocks = append(blocks, bytes.TrimSuffix(b, []byte("\n")))
	}
	content2, kept, reason, err := h.Blocks(call, blocks)
	if kept == nil {
		if err != nil {
			return Answer{}, err
		}
		return geminiAnswer(geminiOutput{}, nil, reason)
	}
	texts := make([]string, 0, len(content2))
	for _, b := range content2 {
		var block struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(b, &block); err != nil {
			return Answer{}, err
		}
		texts = append(texts, wrapUntrusted(block.Text))
	}
	return geminiReplace(in, call, strings.Join(texts, "\n"), kept.Descriptor)
}

// Gemini's envelope of a tool's text, and the escape it gives a closing
// tag inside it.
const (
	untrustedOpen    = "<untrusted_context>\n"
	untrustedClose   = "\n</untrusted_context>"
	untrustedEscaped = "&lt;/untrusted_context&gt;"
)

// unwrapUntrusted is the text inside Gemini's envelope; ok is false for a
// text not in one, and for one holding the escaped closing tag, which
// Gemini writes both for a closing tag and for the escape itself (which
// of them the tool wrote is not certain).
func unwrapUntrusted(s string) (string, bool) {
	inner, ok := strings.CutPrefix(s, untrustedOpen)
	if !ok {
		return "", false
	}
	inner, ok = strings.CutSuffix(inner, untrustedClose)
	if !ok || strings.Contains(inner, untrustedEscaped) {
		return "", false
	}
	return inner, true
}

// wrapUntrusted puts a text in Gemini's envelope, as Gemini does: the
// stub shows excerpts of the tool's text, which stay marked as such.
func wrapUntrusted(s string) string {
	return untrustedOpen + strings.ReplaceAll(s, "</untrusted_context>", untrustedEscaped) + untrustedClose
}

// geminiReplace makes the model see text instead of the call's output: a
// tail call to read_file of a file holding text, in Gemini's project temp
// directory; or, where there is none or read_file would not show the text
// exactly, a denial whose reason is the text.
func geminiReplace(in geminiInput, call Call, text string, d *retain.Descriptor) (Answer, error) {
	deny := geminiOutput{Decision: "deny", Reason: text}
	p, ok := geminiStubPath(in, call)
	if !ok || !readFileShowsExactly(text) {
		return geminiAnswer(deny, d, "")
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return geminiAnswer(deny, d, "")
	}
	if err := retain.WriteFileAtomic(p, []byte(text), 0o600); err != nil {
		return geminiAnswer(deny, d, "")
	}
	return geminiAnswer(geminiOutput{HookSpecificOutput: &geminiSpecifics{HookEventName: "AfterTool",
		TailToolCallRequest: &geminiToolCall{Name: geminiReadFile, Args: map[string]any{"file_path": p}}}}, d, "")
}

// geminiStubPath is where the stub of call is written: in Gemini's
// project temp directory, found from the session's transcript
// (TEMP/chats/session-….jsonl, or TEMP/chats/PARENT/… for a subagent's),
// in the directory where Gemini saves the session's whole outputs
// (TEMP/tool-outputs/session-ID), which it removes with the session.
func geminiStubPath(in geminiInput, call Call) (string, bool) {
	t := in.TranscriptPath
	if t == "" || !filepath.IsAbs(t) || !retain.IsClean(in.SessionID) || !retain.IsClean(call.ID) {
		return "", false
	}
	dir := filepath.Dir(t)
	if filepath.Base(dir) != "chats" {
		dir = filepath.Dir(dir) // a subagent's transcript
	}
	if filepath.Base(dir) != "chats" {
		return "", false
	}
	temp := filepath.Dir(dir)
	return filepath.Join(temp, "tool-outputs", "session-"+in.SessionID, "retval-"+call.ID+".txt"), true
}

// readFileShowsExactly reports whether Gemini's read_file shows a text as
// it is: it cuts lines over 2,000 characters and files over 2,000 lines,
// turns CRLF into LF, and refuses what looks binary.
func readFileShowsExactly(text string) bool {
	if strings.ContainsAny(text, "\r\x00") || strings.Count(text, "\n") >= 2000 {
		return false
	}
	for line := range strings.SplitSeq(text, "\n") {
		if len(line) > 2000 {
			return false
		}
	}
	return true
}

// geminiCallID derives the id of the call a hook input is about, which
// Gemini does not send: the tool, when the hook ran (UTC, to the
// millisecond) and a digest of the arguments, as
// "shell-20261204T053505680Z-1a2b3c4d". The same input gives the same id,
// so answering it again gives the same stub.
func geminiCallID(in geminiInput) string {
	tool := in.ToolName
	if tool == geminiShell {
		tool = "shell"
	}
	var clean strings.Builder
	for _, c := range []byte(tool) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
			clean.WriteByte(c)
		} else {
			clean.WriteByte('_')
		}
	}
	tool = clean.String()[:min(clean.Len(), 24)]
	when := "notime"
	if t, err := time.Parse(time.RFC3339Nano, in.Timestamp); err == nil {
		when = strings.Replace(t.UTC().Format("20060102T150405.000Z"), ".", "", 1)
	}
	sum := sha256.Sum256(in.ToolInput)
	return tool + "-" + when + "-" + hex.EncodeToString(sum[:4])
}

// geminiAnswer is an answer for stdout; reason says why it changes
// nothing, when it does not.
func geminiAnswer(o geminiOutput, d *retain.Descriptor, reason string) (Answer, error) {
	b, err := encode(o)
	return Answer{Output: b, Descriptor: d, Reason: reason}, err
}
