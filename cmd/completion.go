package cmd

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/retval/retval/pkg/config"
	"github.com/retval/retval/pkg/retain"
	"github.com/urfave/cli/v3"
)

func init() { register("completion", completionCommand) }

func completionCommand() *cli.Command {
	var o opts
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script: bash, zsh or fish",
		UsageText: "retval completion bash|zsh|fish",
		Description: `Prints a script that teaches the shell to complete retval's commands, their
flags, the values of --compress, --policy and --as, run ids after --run, and
value ids after peek and resolve (read from the run named by --run or
RETVAL_RUN). The script asks retval itself, so it stays current with the
binary. Anything else falls back to file names.

Install it once:
   bash: retval completion bash > ~/.local/share/bash-completion/completions/retval
         (or add  source <(retval completion bash)  to ~/.bashrc)
   zsh:  retval completion zsh > "${fpath[1]}/_retval"
         (or add  source <(retval completion zsh)  to ~/.zshrc, after compinit)
   fish: retval completion fish > ~/.config/fish/completions/retval.fish

Example:
   source <(retval completion bash)

Exit status: 0 printed, 2 usage (no shell named, or one not supported).`,
		// The global flags are accepted, as on every command; the script
		// does not depend on them.
		Flags: globalFlags(),
		Action: action(&o, func(e *env) error {
			if len(o.args) != 1 {
				return usageErr("want one shell: retval completion bash|zsh|fish")
			}
			script, ok := completionScripts[o.args[0]]
			if !ok {
				return usageErr("unsupported shell %q: want bash, zsh or fish", o.args[0])
			}
			_, err := io.WriteString(e.stdout, script)
			return err
		}),
	}
}

// The scripts run "retval WORDS… CURRENT --generate-bash-completion": the
// words before the cursor, then the word being completed (even when
// empty), and print the candidates retval answers with, one per line.
// With no candidates the shell completes file names.
var completionScripts = map[string]string{
	"bash": `# bash completion for retval
# Install: retval completion bash > ~/.local/share/bash-completion/completions/retval
#      or: source <(retval completion bash)
_retval() {
    local cur=${COMP_WORDS[COMP_CWORD]}
    local IFS=$'\n'
    local out
    out=$("${COMP_WORDS[0]}" "${COMP_WORDS[@]:1:COMP_CWORD-1}" "$cur" --generate-bash-completion 2>/dev/null) || return 0
    COMPREPLY=($(compgen -W "$out" -- "$cur"))
}
complete -o bashdefault -o default -F _retval retval
`,
	"zsh": `#compdef retval
# zsh completion for retval
# Install: retval completion zsh > "${fpath[1]}/_retval"
#      or: source <(retval completion zsh)   (after compinit)
_retval() {
    local -a out
    out=("${(@f)$(${words[1]} "${(@Q)words[2,CURRENT-1]}" "${(Q)words[CURRENT]}" --generate-bash-completion 2>/dev/null)}")
    if [[ -n ${out[1]} ]]; then
        compadd -- "${out[@]}"
    else
        _files
    fi
}
if [[ $funcstack[1] == _retval ]]; then
    _retval "$@"
else
    compdef _retval retval
fi
`,
	"fish": `# fish completion for retval
# Install: retval completion fish > ~/.config/fish/completions/retval.fish
function __retval_complete
    set -l words (commandline -opc)
    set -l cur (commandline -ct)
    $words[1] $words[2..-1] $cur --generate-bash-completion 2>/dev/null
end
function __retval_has_candidates
    test -n "$(__retval_complete)"
end
complete -c retval -n __retval_has_candidates -f -a '(__retval_complete)'
`,
}

// completionFlag, as the last argument, asks for the candidates for the
// word before it (the name urfave/cli's own scripts use).
const completionFlag = "--generate-bash-completion"

func completing(args []string) bool {
	return len(args) > 1 && args[len(args)-1] == completionFlag
}

// complete answers a completion request "retval WORDS… CURRENT
// --generate-bash-completion": the candidates for CURRENT, which the
// scripts above always pass (empty when nothing is typed yet), one per
// line. It reads the command line as typed, without parsing or
// validating it.
func complete(app *cli.Command, args []string, w io.Writer) {
	words := args[1 : len(args)-1]
	cur := ""
	if n := len(words); n > 0 {
		cur, words = words[n-1], words[:n-1]
	}
	for _, s := range candidates(app, words, cur) {
		if strings.HasPrefix(s, cur) {
			fmt.Fprintln(w, s)
		}
	}
}

// flagValues are the fixed values of flags that take one of a few words.
var flagValues = map[string][]string{
	"compress":  {"none", "zstd", "auto"},
	"read-more": {"peek", "shell"},
	"policy":    {"legacy", "bounded"},
	"as":        {"lexeme", "string"},
}

func candidates(app *cli.Command, words []string, cur string) []string {
	var cmd *cli.Command
	for _, w := range words {
		if !strings.HasPrefix(w, "-") {
			cmd = app.Command(w)
			break
		}
	}
	if cmd == nil {
		if strings.HasPrefix(cur, "-") {
			return []string{"--help", "--version"}
		}
		var out []string
		for _, k := range app.VisibleCommands() {
			out = append(out, k.Name)
		}
		return out
	}
	if prev := lastWord(words); strings.HasPrefix(prev, "-") && !strings.Contains(prev, "=") {
		if f := commandFlagOf(cmd, strings.TrimLeft(prev, "-")); f != nil && !isBool(f) {
			return valueCandidates(words, f.Names()[0])
		}
	}
	if strings.HasPrefix(cur, "-") {
		var out []string
		for _, f := range cmd.VisibleFlags() {
			out = append(out, "--"+f.Names()[0])
		}
		return append(out, "--help")
	}
	switch cmd.Name {
	case "peek", "resolve":
		return valueIDs(words)
	case "completion":
		return []string{"bash", "zsh", "fish"}
	case "hook":
		// hook claude-code [install|uninstall]
		switch n := len(positional(cmd, words)); n {
		case 1:
			return []string{"claude-code"}
		case 2:
			return []string{"install", "uninstall"}
		}
	case "mcp":
		if len(positional(cmd, words)) == 1 {
			var out []string
			for v := range mcpVerbs {
				out = append(out, v)
			}
			slices.Sort(out)
			return out
		}
	}
	return nil
}

// positional returns the words that are not flags or flag values, up to a
// "--": the command's name and the words after it.
func positional(cmd *cli.Command, words []string) []string {
	var out []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w == "--" {
			break
		}
		if strings.HasPrefix(w, "-") {
			if f := commandFlagOf(cmd, strings.TrimLeft(w, "-")); f != nil && !isBool(f) && !strings.Contains(w, "=") {
				i++
			}
			continue
		}
		out = append(out, w)
	}
	return out
}

func valueCandidates(words []string, flag string) []string {
	if v, ok := flagValues[flag]; ok {
		return v
	}
	if flag == "run" {
		dir, _ := runOf(words)
		ids, err := retain.Open(dir).RunIDs()
		if err != nil {
			return nil
		}
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = string(id)
		}
		return out
	}
	return nil // file names, numbers, ranges: the shell's own completion
}

// valueIDs lists the values of the run the command line names.
func valueIDs(words []string) []string {
	dir, run := runOf(words)
	if run == "" {
		return nil
	}
	ds, err := retain.Open(dir).Values(run)
	if err != nil {
		return nil
	}
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = string(d.ID)
	}
	return out
}

// runOf returns the runs-dir and run of a command line being completed,
// with the usual precedence: its flags (after positional arguments too),
// the environment, the config file, the defaults.
func runOf(words []string) (dir, run string) {
	given := map[string]string{}
	for i, w := range words {
		if !strings.HasPrefix(w, "-") {
			continue
		}
		name, value, ok := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if !ok {
			if i+1 >= len(words) {
				continue
			}
			value = words[i+1]
		}
		given[name] = value
	}
	value := func(name string, file config.File) string {
		v, set := given[name]
		return config.Resolve(mustSetting(name), v, set, file).Text
	}
	var file config.File
	if path := configPath(value("config", config.File{})); path != "" {
		file, _ = config.LoadFile(path)
	}
	return value("runs-dir", file), value("run", file)
}

func lastWord(words []string) string {
	if len(words) == 0 {
		return ""
	}
	return words[len(words)-1]
}
