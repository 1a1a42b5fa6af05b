package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/retval/retval/pkg/mcpwrap"
	"github.com/retval/retval/pkg/retain"
	"github.com/urfave/cli/v3"
)

func init() {
	mcpVerbs["wrap"] = mcpVerb{
		usage: "retval mcp wrap (--codex | --claude-code FILE) [--server NAME] [--dry-run]",
		run:   func(e *env, o *mcpOptions, args []string) error { return runMCPWrap(e, o, args, true) },
	}
	mcpVerbs["unwrap"] = mcpVerb{
		usage: "retval mcp unwrap (--codex | --claude-code FILE) [--server NAME] [--dry-run]",
		run:   func(e *env, o *mcpOptions, args []string) error { return runMCPWrap(e, o, args, false) },
	}
	mcpFlags = append(mcpFlags, func(o *mcpOptions) []cli.Flag {
		return []cli.Flag{
			&cli.BoolFlag{Name: "codex", Usage: "wrap or unwrap the [mcp_servers.NAME] entries of Codex's config.toml ($CODEX_HOME, by default ~/.codex)", Destination: &o.wrap.codex},
			&cli.StringFlag{Name: "claude-code", Usage: "wrap or unwrap the mcpServers entries of the Claude Code `FILE` (.mcp.json, ~/.claude.json)", Action: setTo(&o.wrap.claudeCode)},
			&cli.StringFlag{Name: "server", Usage: "wrap or unwrap only the server `NAME` (by default every one that can be)", Action: setTo(&o.wrap.server)},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the change as a diff and write nothing", Destination: &o.wrap.dryRun},
		}
	})
}

// wrapOptions are the flags of mcp wrap and unwrap.
type wrapOptions struct {
	codex, dryRun      bool
	claudeCode, server *string
}

func runMCPWrap(e *env, mo *mcpOptions, args []string, wrap bool) error {
	verb := map[bool]string{true: "wrap", false: "unwrap"}[wrap]
	w := mo.wrap
	switch {
	case len(args) > 0:
		return usageErr("%s takes no arguments, got %q: name the file with --codex or --claude-code FILE", verb, args[0])
	case w.codex && w.claudeCode != nil:
		return usageErr("--codex and --claude-code exclude each other: choose one")
	case !w.codex && w.claudeCode == nil:
		return usageErr("say which client: retval mcp %s --codex or retval mcp %s --claude-code FILE", verb, verb)
	case w.claudeCode != nil && *w.claudeCode == "":
		return usageErr("--claude-code needs a file: .mcp.json or a settings file")
	case w.server != nil && *w.server == "":
		return usageErr("--server needs a name")
	}
	for _, f := range mo.local {
		switch f {
		case "codex", "claude-code", "server", "dry-run", "json", "config":
		default:
			return usageErr("%s does not take --%s: the proxy reads its settings from the config file (retval config shows it)", verb, f)
		}
	}
	o := mcpwrap.Options{Format: mcpwrap.ClaudeCode, Path: deref(w.claudeCode), Server: deref(w.server), DryRun: w.dryRun}
	if w.codex {
		p, err := mcpwrap.CodexConfig()
		if err != nil {
			return usageErr("%v", err)
		}
		o.Format, o.Path = mcpwrap.Codex, p
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot tell where this retval is: %v", err)
	}
	if o.Command, err = filepath.Abs(exe); err != nil {
		return err
	}
	var res *mcpwrap.Result
	if wrap {
		res, err = mcpwrap.Wrap(o)
	} else {
		res, err = mcpwrap.Unwrap(o)
	}
	if err != nil {
		return err
	}
	if jsonWanted(e.args) {
		return writeJSON(e.stdout, wrapJSON(res, o.DryRun))
	}
	out := e.stdout
	if o.DryRun && res.Changed {
		out.Write(res.Diff)
	}
	done := 0
	for _, en := range res.Entries {
		action := wrapActions[en.Action]
		if en.Action == mcpwrap.Wrapped || en.Action == mcpwrap.Unwrapped {
			done++
			if o.DryRun {
				action = "would be " + action
			}
		}
		name := en.Name
		if en.Project != "" {
			name += " (project " + en.Project + ")"
		}
		fmt.Fprintf(out, "%s: %s: %s\n", name, action, shellLine(en.Command))
	}
	switch {
	case len(res.Entries) == 0:
		fmt.Fprintf(out, "%s: no MCP servers; nothing changed\n", res.Path)
	case !res.Changed:
		fmt.Fprintf(out, "%s: nothing to %s; nothing changed\n", res.Path, verb)
	case o.DryRun:
		fmt.Fprintf(out, "%s: would %s %s; dry run, nothing written\n", res.Path, verb, servers(done))
	default:
		fmt.Fprintf(out, "%s: %s %s (the file as it was: %s)\n", res.Path, map[bool]string{true: "wrapped", false: "unwrapped"}[wrap], servers(done), res.Backup)
	}
	return nil
}

var wrapActions = map[mcpwrap.Action]string{
	mcpwrap.Wrapped:        "wrapped",
	mcpwrap.AlreadyWrapped: "already wrapped",
	mcpwrap.Unwrapped:      "unwrapped",
	mcpwrap.NotWrapped:     "not wrapped",
	mcpwrap.Remote:         "left alone, a remote server (retval mcp proxy --url URL relays one)",
}

func servers(n int) string {
	if n == 1 {
		return "1 server"
	}
	return fmt.Sprintf("%d servers", n)
}

// shellLine is a command line as a person would type it.
func shellLine(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = retain.ShellQuote(w)
	}
	return strings.Join(q, " ")
}

type wrapEntryJSON struct {
	Name    string   `json:"name"`
	Project string   `json:"project,omitempty"`
	Action  string   `json:"action"`
	Command []string `json:"command"`
}

type wrapResultJSON struct {
	Path    string          `json:"path"`
	Changed bool            `json:"changed"`
	DryRun  bool            `json:"dry_run"`
	Backup  string          `json:"backup,omitempty"`
	Diff    string          `json:"diff,omitempty"`
	Servers []wrapEntryJSON `json:"servers"`
}

func wrapJSON(res *mcpwrap.Result, dry bool) wrapResultJSON {
	j := wrapResultJSON{Path: res.Path, Changed: res.Changed, DryRun: dry, Backup: res.Backup, Diff: string(res.Diff), Servers: []wrapEntryJSON{}}
	for _, en := range res.Entries {
		j.Servers = append(j.Servers, wrapEntryJSON{Name: en.Name, Project: en.Project, Action: string(en.Action), Command: en.Command})
	}
	return j
}
