package cmd

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/retval/retval/pkg/hook"
	"github.com/urfave/cli/v3"
)

func init() { register("hook", hookCommand) }

// hookOptions are hook's flags.
type hookOptions struct {
	opts
	project                *string
	user, dryRun           *bool
	expandShell, wrapShell bool
}

func hookCommand() *cli.Command {
	var o hookOptions
	return &cli.Command{
		Name:  "hook",
		Usage: "answer an agent's tool hook, or install it: claude-code, codex, gemini-cli, opencode",
		UsageText: `retval hook claude-code
retval hook claude-code install (--project DIR | --user) [--dry-run]
retval hook claude-code uninstall (--project DIR | --user) [--dry-run]
retval hook codex [--expand-shell] [--wrap-shell]
retval hook codex install (--project DIR | --user) [--expand-shell] [--wrap-shell] [--dry-run]
retval hook codex uninstall (--project DIR | --user) [--dry-run]
retval hook gemini-cli [--wrap-shell]
retval hook gemini-cli install (--project DIR | --user) [--wrap-shell] [--dry-run]
retval hook gemini-cli uninstall (--project DIR | --user) [--dry-run]
retval hook opencode`,
		Description: `retval hook claude-code reads one Claude Code PostToolUse hook input on
stdin. A Bash or MCP result over the threshold is retained in the run named
by the session id (the call is the tool_use_id) and the hook answers with
its stub, which the model sees instead of the output; a Bash result Claude
Code cut is read whole from the file it wrote. The stub's last line is a
retval peek command the model can run with its Bash tool. Anything small,
a tool other than Bash and mcp__*, --off, or any failure: nothing is
printed, the reason goes to stderr and the exit status is 0, so Claude
Code shows its own output. The store is runs_dir from the config file
(~/.config/retval/config.toml) or RETVAL_RUNS_DIR, by default
$XDG_STATE_HOME/retval/runs (~/.local/state/retval/runs).

It answers PreToolUse too: a string argument of Write, Edit, MultiEdit,
NotebookEdit, Bash or an MCP tool that begins with $expand: followed by an
expand node ({"$ref": …}, {"$concat": […]}, {"$literal": "…"}; an MCP
tool's bare node objects too) is replaced by the text it stands for
(updatedInput), with no permission decision, so Claude Code's own rules
judge the expanded call; the model is told the bytes and SHA-256 of each
expanded field. A reference that does not resolve denies the call, naming
each failure. At SessionStart it tells the model the form once.

install adds the hook to DIR/.claude/settings.json (--project) or to
~/.claude/settings.json (--user), keeping every other byte of the file, and
allows the model's "retval peek" and "retval resolve" Bash commands in the
user settings (Claude Code ignores a project's allow list until the folder
is trusted). Installing again changes nothing; --dry-run prints the diff and
writes nothing; the file as it was is kept beside it as
settings.json.retval.bak, and what install added is noted beside it in
settings.json.retval-added. A settings file that is not valid JSON is
refused and left untouched. uninstall removes what install added and
nothing else (with --user, the allow entries too): an install followed by
an uninstall leaves the file byte for byte as it was, or absent if it was.

retval hook codex answers Codex's hooks (the same wire format, in
$CODEX_HOME/hooks.json or DIR/.codex/hooks.json). Codex accepts a rewritten
call only as an approved one, so by default only MCP tools' references are
expanded (Codex's approval policy still applies to MCP calls). With
--expand-shell, shell commands' references are expanded too; with
--wrap-shell, every shell command runs through retval exec in the session's
run, so its whole output is retained and the model sees the stub — each
such call skips Codex's approval prompt (its sandbox still applies). Codex
runs hooks only once they are trusted: see docs/codex.md.

retval hook gemini-cli answers Gemini CLI's BeforeTool, AfterTool and
SessionStart hooks (in ~/.gemini/settings.json, or DIR/.gemini/settings.json,
which Gemini reads only in a trusted folder). A run_shell_command or MCP
output over the threshold is retained in the run named by the session id,
under a call id derived from the hook input (the tool, the time and a digest
of the arguments), and the model sees the stub instead, as the call's
successful result: the hook writes it beside the outputs Gemini saves in its
project temp directory and has Gemini's read_file show it (a tail call of a
read-only tool that Gemini's default policy allows), so no command is
rewritten and the commands you are asked to approve are the ones you would
be asked about without retval. The value is the output as Gemini captured it
(stdout and stderr together, trimmed, without ANSI escapes), not the command's
exact bytes, which Gemini hands no hook; the stub says so. BeforeTool expands $expand: references in
run_shell_command, write_file, replace and MCP tools; Gemini then checks its
policy against the expanded call. With --wrap-shell, every shell command runs
through retval exec, so its stream is retained byte for byte — Gemini then
asks approval for, and matches its rules against, the rewritten command: see
docs/gemini.md.

retval hook opencode answers the opencode plugin
(integrations/opencode/retval.js), which hands it each tool call's
tool.execute.after input and output as one JSON object on stdin and applies
the answer: a built-in tool's big output (read whole from the file opencode
saved it to) or an MCP result's text becomes the stub, the same way. The
plugin is installed by copying it into ~/.config/opencode/plugins/.

Example:
   retval hook claude-code install --user
   retval hook claude-code install --project . --dry-run
   retval hook claude-code uninstall --user
   retval hook gemini-cli install --user

Exit status: 0 answered or passed (the hook itself always exits 0),
1 a settings file could not be read, parsed or written, 2 usage.`,
		Flags: append(flags("runs-dir", "config", "off", "compress", "threshold", "preview-bytes", "peek-lines",
			"max-value-size", "max-run-bytes", "max-run-values"),
			&cli.StringFlag{Name: "project", Usage: "install into (or uninstall from) the project in DIR: DIR/.claude/settings.json (DIR/.gemini/settings.json, DIR/.codex/hooks.json)", Action: setTo(&o.project)},
			&cli.BoolFlag{Name: "user", Usage: "install into (or uninstall from) the user settings, ~/.claude/settings.json (~/.gemini/settings.json, ~/.codex/hooks.json)", Action: setTo(&o.user)},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the change as a diff and write nothing", Action: setTo(&o.dryRun)},
			&cli.BoolFlag{Name: "expand-shell", Usage: "codex: expand $expand: references in shell commands too (each such call is approved: see docs/codex.md)", Destination: &o.expandShell},
			&cli.BoolFlag{Name: "wrap-shell", Usage: "codex, gemini-cli: run every shell command through retval exec, so its whole output is retained (Codex approves each such call, Gemini CLI asks approval for the rewritten command: see docs/codex.md, docs/gemini.md)", Destination: &o.wrapShell},
		),
		Action: action(&o.opts, func(e *env) error { return runHook(e, &o) }),
	}
}

func runHook(e *env, o *hookOptions) error {
	args := o.args
	want := strings.Join(hook.Names(), " or ")
	if len(args) == 0 {
		return usageErr("name the agent: retval hook %s", want)
	}
	agent, ok := hook.Lookup(args[0])
	if !ok {
		return usageErr("unknown agent %q: want %s", args[0], want)
	}
	scoped := o.project != nil || o.user != nil || o.dryRun != nil
	switch {
	case len(args) == 1 && scoped:
		return usageErr("--project, --user and --dry-run are for install and uninstall: retval hook %s install --user", agent.Name())
	case len(args) == 1:
		answerHook(e, o, agent)
		return nil
	case len(args) > 2:
		return usageErr("too many arguments: want retval hook %s [install|uninstall]", agent.Name())
	case args[1] != "install" && args[1] != "uninstall":
		return usageErr("unknown action %q: want install or uninstall", args[1])
	case agent.Settings() == nil:
		return usageErr("%s's hook has nothing to install: it is the plugin integrations/opencode/retval.js, copied into ~/.config/opencode/plugins/", agent.Name())
	}
	return installHook(e, o, agent.Settings(), args[1] == "uninstall")
}

// answerHook answers one hook input. It never fails: whatever goes
// wrong, nothing is printed on stdout (the agent then shows the tool's
// own output), the reason goes to stderr, and the exit status is 0.
func answerHook(e *env, o *hookOptions, agent hook.Agent) {
	say := func(format string, args ...any) {
		fmt.Fprintf(e.stderr, "retval: hook: %s: %s\n", agent.Name(), oneLine(fmt.Sprintf(format, args...)))
	}
	defer func() {
		if v := recover(); v != nil {
			say("internal error: %v", v)
		}
	}()
	r, err := o.settings(e)
	if err != nil {
		io.Copy(io.Discard, e.stdin)
		say("%v", err)
		return
	}
	dir, err := agentRunsDir(r)
	if err != nil {
		say("%v", err)
		return
	}
	exe, _ := os.Executable()
	ans, err := hook.Run(agent, e.stdin, hook.Options{RunsDir: dir, Limits: r.Limits, Compress: r.Compress, Off: r.Off,
		OnLogError:  logStore(dir, e, "hook: "+agent.Name()).OnLogError,
		ExpandShell: o.expandShell, WrapShell: o.wrapShell, Exe: exe})
	if err != nil {
		say("%v", err)
		return
	}
	if len(ans.Output) > 0 {
		if _, err := e.stdout.Write(ans.Output); err != nil {
			say("%v", err)
		}
	}
	if ans.Reason != "" {
		say("%s", ans.Reason)
	}
}

func installHook(e *env, o *hookOptions, s *hook.Settings, uninstall bool) error {
	user := deref(o.user)
	switch {
	case o.project != nil && user:
		return usageErr("--project and --user exclude each other: choose one")
	case o.project == nil && !user:
		return usageErr("say where: --project DIR or --user")
	case o.project != nil && *o.project == "":
		return usageErr("--project needs a directory")
	}
	userFile, err := s.UserFile()
	if err != nil {
		return usageErr("%v", err)
	}
	hooksFile := userFile
	if !user {
		if hooksFile, err = s.ProjectFile(*o.project); err != nil {
			return usageErr("%v", err)
		}
	}
	allowFile := hooksFile
	if s.AllowInUser != "" {
		allowFile = userFile
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot tell where this retval is: %v", err)
	}
	if exe, err = filepath.Abs(exe); err != nil {
		return err
	}
	command := s.Command(exe)
	for _, opt := range []flagGiven{{"expand-shell", o.expandShell}, {"wrap-shell", o.wrapShell}} {
		if opt.set {
			if s.Name != "codex" && !(opt.name == "wrap-shell" && s.Name == "gemini-cli") {
				return usageErr("--%s is for the codex hook (and --wrap-shell for gemini-cli): other agents' hooks do not need an approval to rewrite a call", opt.name)
			}
			command += " --" + opt.name
		}
	}
	dry := deref(o.dryRun)
	var changes []hook.Change
	if uninstall {
		if s.AllowInUser != "" && !user {
			allowFile = "" // other projects may use them
		}
		changes, err = s.Uninstall(hook.UninstallOptions{Hooks: hooksFile, Allow: allowFile, Command: command, DryRun: dry})
	} else {
		changes, err = s.Install(hook.InstallOptions{Hooks: hooksFile, Allow: allowFile, Command: command, DryRun: dry})
	}
	if err != nil {
		return err
	}
	out := e.stdout
	for _, ch := range changes {
		if dry && ch.Changed {
			out.Write(ch.Diff)
		}
	}
	allowed := "the " + strings.Join(s.AllowAt, ".") + " entries for " + s.AllowedFor
	verb := map[bool]string{false: "added", true: "removed"}[uninstall]
	for _, ch := range changes {
		if ch.Own != "" {
			if uninstall {
				fmt.Fprintf(out, "%s: kept retval's hook entry %q: it was there before install (remove it by hand to stop the hook)\n", ch.Path, ch.Own)
			} else {
				fmt.Fprintf(out, "%s: retval's hook is already there, as %q: kept as it is\n", ch.Path, ch.Own)
			}
		}
		if len(ch.KeptAllow) > 0 {
			fmt.Fprintf(out, "%s: kept the %s entries %s: no note says install added them (remove them by hand if you do not want them)\n", ch.Path, strings.Join(s.AllowAt, "."), strings.Join(ch.KeptAllow, ", "))
		}
		if !ch.Changed {
			switch {
			case ch.Own != "" || len(ch.KeptAllow) > 0:
			case uninstall:
				fmt.Fprintf(out, "%s: no retval entries; nothing changed\n", ch.Path)
			default:
				fmt.Fprintf(out, "%s: already set up; nothing changed\n", ch.Path)
			}
			continue
		}
		allowed := allowed
		if len(ch.AllowEntries) < len(s.Allowed) {
			allowed = "the " + strings.Join(s.AllowAt, ".") + " entr" + map[bool]string{true: "y ", false: "ies "}[len(ch.AllowEntries) == 1] + strings.Join(ch.AllowEntries, ", ")
		}
		what := ""
		switch {
		case ch.Hook && ch.Allow:
			what = "the hook (" + command + ") and " + allowed
		case ch.Hook:
			what = "the hook (" + command + ")"
		case ch.Allow:
			what = allowed
		}
		if dry {
			fmt.Fprintf(out, "%s: would have %s %s; dry run, nothing written\n", ch.Path, verb, what)
			continue
		}
		fmt.Fprintf(out, "%s: %s %s", ch.Path, verb, what)
		switch {
		case ch.Deleted:
			fmt.Fprint(out, "; install had made the file and nothing else is in it: removed it")
		case ch.Created:
			fmt.Fprint(out, " (a new file)")
		case ch.Backup != "":
			fmt.Fprintf(out, " (the file as it was: %s)", ch.Backup)
		}
		fmt.Fprintln(out)
	}
	if s.AllowInUser != "" && !user && !uninstall {
		fmt.Fprintf(out, "the allow entries are in %s: %s\n", userFile, s.AllowInUser)
	}
	if _, err := exec.LookPath("retval"); err != nil && !uninstall {
		fmt.Fprintf(e.stderr, "retval: hook: note: no retval on PATH: the stubs tell the model to run retval peek, which needs one\n")
	}
	if s.AllowInUser != "" && uninstall && !user {
		fmt.Fprintf(out, "%s in %s are kept (other projects may use them): retval hook %s uninstall --user removes them\n", allowed, userFile, s.Name)
	}
	return nil
}
