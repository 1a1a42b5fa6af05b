// Package hook plugs retval into agents that let a hook replace a tool's
// output before the model sees it: a big result is retained and the model
// is shown its stub, whose read-more line is a command the model can run
// with one of its own tools.
//
// The package is one seam with an adapter per agent. What every agent's
// hook does is written once:
//
//   - Hook (hook.go): decide to retain or to let an output through, in
//     the run of the agent's session under the agent's id of the call;
//     the stub with its read-more line in the form the agent's model can
//     call (Shell output with a saved whole copy and a stderr, MCP content
//     Blocks, any other Retain);
//   - Settings (install.go): install and uninstall retval's entries in an
//     agent's JSON settings file, with a backup, a note of what was added
//     so that uninstall removes that alone, and every other byte kept.
//
// What is an agent's own — its hook's input and answer, its settings
// files, its allow-rule syntax, its read-more form — is one file per
// agent implementing Agent: claudecode.go (Claude Code's PostToolUse
// hook) and opencode.go (what the opencode plugin hands over). Another
// agent is another such file.
//
// A Go harness calls it as the CLI does:
//
//	ans, err := hook.ClaudeCode(os.Stdin, hook.Options{RunsDir: dir})
//	if err != nil || len(ans.Output) == 0 {
//		// print nothing: Claude Code shows the tool's own output
//	}
//	os.Stdout.Write(ans.Output)
//
// A hook never breaks a tool call: every failure leaves the output as the
// agent has it (no answer), and the caller exits 0.
package hook
