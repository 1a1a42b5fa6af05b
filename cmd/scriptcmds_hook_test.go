package cmd

import (
	"encoding/json"
	"os"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	// hookinput OUT bash|mcp SESSION CALL FILE [persisted]: write a Claude
	// Code PostToolUse hook input to OUT whose tool output is FILE: the
	// Bash tool's stdout (with "persisted": cut to 30,000 bytes, the whole
	// output named by persistedOutputPath, as Claude Code does), or an MCP
	// tool's result string.
	scriptCmds["hookinput"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 5 {
			ts.Fatalf("usage: hookinput OUT bash|mcp SESSION CALL FILE [persisted]")
		}
		body, err := os.ReadFile(ts.MkAbs(args[4]))
		ts.Check(err)
		in := map[string]any{"session_id": args[2], "transcript_path": "/nonexistent.jsonl", "cwd": ts.MkAbs("."),
			"hook_event_name": "PostToolUse", "tool_use_id": args[3]}
		switch args[1] {
		case "bash":
			resp := map[string]any{"stdout": string(body), "stderr": "", "interrupted": false, "isImage": false}
			if len(args) > 5 && args[5] == "persisted" {
				resp["stdout"] = string(body[:min(len(body), 30000)])
				resp["persistedOutputPath"] = ts.MkAbs(args[4])
				resp["persistedOutputSize"] = len(body)
			}
			in["tool_name"], in["tool_input"], in["tool_response"] = "Bash", map[string]any{"command": "cat " + args[4]}, resp
		case "mcp":
			in["tool_name"], in["tool_input"], in["tool_response"] = "mcp__filesystem__read_text_file", map[string]any{"path": args[4]}, string(body)
			in["mcp_server"] = map[string]any{"name": "filesystem", "source": "dynamic"}
		default:
			ts.Fatalf("hookinput: want bash or mcp, not %q", args[1])
		}
		b, err := json.Marshal(in)
		ts.Check(err)
		ts.Check(os.WriteFile(ts.MkAbs(args[0]), b, 0o644))
	}
	// hookstub ANSWER OUT: write the stub a hook answer shows the model
	// (updatedToolOutput.stdout, or updatedMCPToolOutput) to OUT.
	scriptCmds["hookstub"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 {
			ts.Fatalf("usage: hookstub ANSWER OUT")
		}
		var a struct {
			HookSpecificOutput struct {
				HookEventName     string `json:"hookEventName"`
				UpdatedToolOutput *struct {
					Stdout string `json:"stdout"`
				} `json:"updatedToolOutput"`
				UpdatedMCPToolOutput *string `json:"updatedMCPToolOutput"`
			} `json:"hookSpecificOutput"`
		}
		b, err := os.ReadFile(ts.MkAbs(args[0]))
		ts.Check(err)
		ts.Check(json.Unmarshal(b, &a))
		h := a.HookSpecificOutput
		var stub string
		switch {
		case h.HookEventName != "PostToolUse":
			ts.Fatalf("hookEventName %q", h.HookEventName)
		case h.UpdatedToolOutput != nil:
			stub = h.UpdatedToolOutput.Stdout
		case h.UpdatedMCPToolOutput != nil:
			stub = *h.UpdatedMCPToolOutput
		default:
			ts.Fatalf("no updated output in %s", b)
		}
		ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(stub), 0o644))
	}
}
