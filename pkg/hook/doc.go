// Package hook plugs retval into agent harnesses that let a hook replace a
// tool's output before the model sees it. ClaudeCode answers one Claude
// Code PostToolUse hook input: a big Bash or MCP result is retained and the
// model is shown its stub, whose read-more line is a shell command the
// model can run with its Bash tool. Install and Uninstall add and remove
// that hook in a Claude Code settings file.
//
// A Go harness calls it as the CLI does:
//
//	ans, err := hook.ClaudeCode(os.Stdin, hook.Options{RunsDir: dir})
//	if err != nil || len(ans.Output) == 0 {
//		// print nothing: Claude Code shows the tool's own output
//	}
//	os.Stdout.Write(ans.Output)
//
// A hook never breaks a tool call: every failure leaves the output as
// Claude Code has it (no answer), and the caller exits 0.
package hook
