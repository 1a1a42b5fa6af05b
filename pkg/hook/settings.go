package hook

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/retval/retval/pkg/retain"
)

// Matcher is the tools the hook entry is for: Bash and every MCP tool.
const Matcher = "Bash|mcp__.*"

// Allowed are the permissions.allow entries that let the model read
// values through its Bash tool without a permission prompt.
var Allowed = []string{"Bash(retval peek:*)", "Bash(retval resolve:*)"}

// ClaudeCodeSettings is what retval adds to a Claude Code settings file:
// the PostToolUse hook for Bash and MCP tools, and the allow entries for
// the model's read commands.
var ClaudeCodeSettings = &Settings{
	Agent:       "Claude Code",
	Hooks:       []HookEntry{{Event: "PostToolUse", Matcher: Matcher}},
	Ours:        func(c string) bool { return isRetvalHook(c, "claude-code", false) },
	InstallForm: func(c string) bool { return isRetvalHook(c, "claude-code", true) },
	AllowAt:     []string{"permissions", "allow"},
	Allowed:     Allowed,
}

// UserSettings is the user's Claude Code settings file:
// $CLAUDE_CONFIG_DIR/settings.json when that is set, else
// ~/.claude/settings.json.
func UserSettings() (string, error) {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Abs(filepath.Join(d, "settings.json"))
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home directory: set HOME, or use --project DIR")
	}
	return filepath.Join(home, ".claude", "settings.json"), nil
}

// ProjectSettings is the settings file of the project in dir.
func ProjectSettings(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("project %s: %v", dir, errors.Unwrap(err))
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("project %s is not a directory", dir)
	}
	return filepath.Join(abs, ".claude", "settings.json"), nil
}

// Command is the hook's command line for the retval binary at exe.
func Command(exe string) string { return retain.ShellQuote(exe) + " hook claude-code" }

// Install adds the hook entry
//
//	{"matcher":"Bash|mcp__.*","hooks":[{"type":"command","command":COMMAND}]}
//
// to hooks.PostToolUse in o.Hooks and the Allowed entries to
// permissions.allow in o.Allow (see Settings.Install).
func Install(o InstallOptions) ([]Change, error) { return ClaudeCodeSettings.Install(o) }

// Uninstall removes what Install added (see Settings.Uninstall).
func Uninstall(o UninstallOptions) ([]Change, error) { return ClaudeCodeSettings.Uninstall(o) }

// isRetvalHook reports whether a hook command runs retval's hook for
// agent: a program named retval (any path, after any VAR=value
// assignments), then "hook" and agent, then (unless installForm) any
// arguments but install and uninstall.
func isRetvalHook(command, agent string, installForm bool) bool {
	w, ok := shellWords(command)
	all := len(w)
	for ok && len(w) > 0 && strings.Contains(w[0], "=") && !strings.Contains(w[0], "/") {
		w = w[1:]
	}
	if !ok || len(w) < 3 || filepath.Base(w[0]) != "retval" || w[1] != "hook" || w[2] != agent {
		return false
	}
	if installForm {
		return all == 3
	}
	return len(w) == 3 || w[3] != "install" && w[3] != "uninstall"
}

// shellWords splits a command line into words as a POSIX shell does for
// plain words and quoting ('…', "…", backslash); ok is false for one it
// cannot split (an unterminated quote).
func shellWords(s string) (words []string, ok bool) {
	var w strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words, in = append(words, w.String()), false
				w.Reset()
			}
			continue
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, false
			}
		case c == '\\':
			if i+1 >= len(s) {
				return nil, false
			}
			i++
			w.WriteByte(s[i])
		default:
			w.WriteByte(c)
		}
		in = true
	}
	if in {
		words = append(words, w.String())
	}
	return words, true
}
