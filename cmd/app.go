// Package cmd wires retval's subcommands to the packages under pkg/. It
// parses flags, calls one function, prints; nothing here knows the store's
// format.
package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/retval/retval/pkg/config"
	"github.com/retval/retval/pkg/retain"
	"github.com/urfave/cli/v3"
)

// commands is filled by each subcommand's file.
var commands []command

// command is a registered command: its name, and what builds it.
type command struct {
	name  string
	build func() *cli.Command
}

func register(name string, f func() *cli.Command) { commands = append(commands, command{name, f}) }

// Exit statuses of SPEC §5.
const (
	exitOK       = 0
	exitFailed   = 1
	exitUsage    = 2
	exitNotFound = 3
	exitCapacity = 4
	exitBudget   = 5
	exitExpand   = 6
	exitInvalid  = 7
)

// exitStatuser is an error that carries the exit status retval must end
// with: the status of the MCP server the proxy ran, which already said
// why on its stderr.
type exitStatuser interface{ ExitStatus() int }

// exitCode is the one place where errors become exit statuses.
func exitCode(err error) int {
	var es exitStatuser
	if errors.As(err, &es) {
		return es.ExitStatus()
	}
	switch retain.CodeOf(err) {
	case retain.CodeUsage:
		return exitUsage
	case retain.CodeUnknownReference, retain.CodeCollected:
		return exitNotFound
	case retain.CodeCapacity:
		return exitCapacity
	case retain.CodeBudgetExhausted:
		return exitBudget
	case retain.CodeExpandRefused:
		return exitExpand
	case retain.CodeInvalidRange, retain.CodeNotJSON, retain.CodeAmbiguousJSON, retain.CodeDigestMismatch,
		retain.CodeNotString, retain.CodeNotUTF8, retain.CodeBadPointer, retain.CodeTooLarge, retain.CodeBadReference:
		return exitInvalid
	}
	return exitFailed
}

// cmdError is an error of a named command, printed as
// "retval: <command>: <what> (<code>)"; with no command (an error of
// "retval" itself), "retval: <what> (<code>)".
type cmdError struct {
	cmd string
	err error
}

func (e *cmdError) Error() string { return e.err.Error() }
func (e *cmdError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return retain.Errorf(retain.CodeUsage, format, args...)
}

// env is a command's view of the process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	args           []string // as given to Main
}

// envOf returns the process view stored in retval's root command.
func envOf(c *cli.Command) *env { return c.Root().Metadata["env"].(*env) }

// Main runs retval with args (args[0] is the program name) and returns the
// exit status. It never panics: a panic is reported as one line,
// "retval: internal error: …", and exit status 1.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return mainFor(commandOf(args), args, stdin, stdout, stderr)
}

// mainFor is Main with command only built ("" for all).
func mainFor(only string, args []string, stdin io.Reader, stdout, stderr io.Writer) (status int) {
	defer func() {
		if v := recover(); v != nil {
			status = report(args, &panicError{value: v}, stdout, stderr)
		}
	}()
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, args: args}
	app := newAppFor(e, only)
	if completing(args) {
		complete(app, args, stdout)
		return exitOK
	}
	err := app.Run(context.Background(), args)
	if err == nil {
		return exitOK
	}
	return report(args, err, stdout, stderr)
}

// report prints err as "retval: <command>: <what> (<code>)", plus a
// "hint: " line where there is something to do, or with --json as SPEC's
// {"error": {"code", "message"}} (hints are for people), and returns its
// exit status.
func report(args []string, err error, stdout, stderr io.Writer) int {
	var es exitStatuser
	if errors.As(err, &es) {
		return es.ExitStatus() // nothing to add to what the server said
	}
	name := ""
	var ce *cmdError
	var pe *panicError
	switch {
	case errors.As(err, &pe):
	case errors.As(err, &ce):
		name = ce.cmd
	case len(args) > 1 && !strings.HasPrefix(args[1], "-"):
		name = args[1]
	}
	code := retain.CodeOf(err)
	msg, hint := oneLine(err.Error()), hintOf(err)
	if hint == "" {
		hint = hintFor(err, msg)
	}
	if jsonWanted(args) {
		obj := map[string]any{"code": code, "message": msg}
		if pe != nil {
			obj["code"] = "internal"
		}
		// Errors that carry structured details (expand's failing nodes)
		// put them beside code and message.
		var d interface{ ErrorDetails() map[string]any }
		if errors.As(err, &d) {
			for k, v := range d.ErrorDetails() {
				obj[k] = v
			}
		}
		writeJSON(stdout, map[string]any{"error": obj})
	} else {
		line := "retval: "
		if name != "" {
			line += name + ": "
		}
		line += msg
		if pe == nil {
			line += " (" + string(code) + ")"
		}
		if hint != "" {
			line += "\nhint: " + oneLine(hint)
		}
		fmt.Fprintln(stderr, line)
	}
	return exitCode(err)
}

// jsonWanted reports whether --json was asked for, on the command line or
// in the environment, so that even a usage error is answered in JSON.
func jsonWanted(args []string) bool {
	for _, a := range args[1:] {
		if a == "--" {
			break
		}
		if a == "--json" || a == "-json" || a == "--json=true" {
			return true
		}
	}
	v, _ := config.ParseBool(os.Getenv("RETVAL_JSON"))
	return v
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// stopAtFirstArg makes flag parsing stop at the first positional argument,
// as urfave/cli v2 and the flag package did (v3 parses flags anywhere by
// default): interspersed then reads the flags after it, with what only
// retval knows (--outline's optional pointer, "--" anywhere ending the
// flags), and exec hands everything after its command's name to it.
var stopAtFirstArg = func() *int { n := 1; return &n }()

// commandOf is the command a command line runs when its first word names
// one ("retval peek …", as harnesses call it), else "": help, completion
// and global flags before the command's name need every command.
func commandOf(args []string) string {
	if len(args) < 2 || completing(args) {
		return ""
	}
	for _, c := range commands {
		if c.name == args[1] {
			return c.name
		}
	}
	return ""
}

// newApp is retval with every command built.
func newApp(e *env) *cli.Command { return newAppFor(e, "") }

// newAppFor is retval with command only built ("" for all); the others
// are their names alone. A call pays for its own command's flags, not for
// every command's (building them all was more than half of a small peek's
// allocations).
func newAppFor(e *env, only string) *cli.Command {
	app := &cli.Command{
		Name:  "retval",
		Usage: "keep big tool results out of an LLM agent's context",
		// v3 would write "[command [command options]]".
		UsageText: "retval [global options] command [command options]",
		Version:   versionFlagGate,
		// No VERSION section: --version says what the build is.
		CustomRootCommandHelpTemplate: rootHelpTemplate,
		Description: `retval writes a large tool result to disk once and prints a small stub
(id, size, SHA-256, completeness, head and tail) for the model to see; the
model then reads exactly the slices it needs.

Example:
   some_tool | retval retain --run "$RUN" --call "$CALL_ID"
   retval peek --run "$RUN" <id> --lines 1-40

Exit status: 0 done, 1 failed (I/O, corrupt, conflict), 2 usage, 3 not found,
4 capacity exhausted, 5 lookup budget exhausted, 6 expand refused,
7 invalid reference.`,
		Metadata: map[string]any{"env": e},
		// The global flags, also accepted before the command's name.
		Flags:                  appFlags(),
		Reader:                 e.stdin,
		Writer:                 e.stdout,
		ErrWriter:              e.stderr,
		HideHelpCommand:        true,
		UseShortOptionHandling: false,
		Suggest:                true,
		StopOnNthArg:           stopAtFirstArg,
		ExitErrHandler:         func(context.Context, *cli.Command, error) {}, // Main decides exit codes
		OnUsageError: func(_ context.Context, c *cli.Command, err error, _ bool) error {
			return &cmdError{err: rootUsageError(c, envOf(c).args, err)}
		},
		// "retval" alone prints the help; "retval help [COMMAND]" too;
		// any other word is an unknown command.
		Action: func(ctx context.Context, c *cli.Command) error {
			args := c.Args().Slice()
			if len(args) > 0 && isFlag(args[0]) && !afterTerminator(envOf(c).args, args) {
				// A flag v3 does not take for one ("-5": a dash and no
				// letter reads as a negative number), not a command.
				if badFlagSyntax(args[0]) {
					return &cmdError{err: usageErr("bad flag syntax: %s", args[0])}
				}
				return &cmdError{err: rootUnknownFlag(c, envOf(c).args, strings.TrimLeft(args[0], "-"))}
			}
			if len(args) > 0 && args[0] == "help" {
				args = args[1:]
				if len(args) == 0 {
					return cli.ShowAppHelp(c)
				}
				if c.Command(args[0]) != nil {
					return cli.ShowCommandHelp(ctx, c, args[0])
				}
			}
			if len(args) == 0 {
				return cli.ShowAppHelp(c)
			}
			return &cmdError{err: unknownCommand(c, args[0])}
		},
	}
	for _, rc := range commands {
		if only != "" && rc.name != only {
			app.Commands = append(app.Commands, &cli.Command{Name: rc.name})
			continue
		}
		c := rc.build()
		name := c.Name
		action := c.Action
		c.Action = func(ctx context.Context, cmd *cli.Command) error {
			if helpAsked(cmd) {
				// "retval hook claude-code --help", "retval mcp serve -h":
				// the flag library stops at the first word after the
				// command's name, so it never saw the flag; the command
				// must not run (read stdin, start a server) instead.
				return cli.ShowCommandHelp(ctx, cmd.Root(), name)
			}
			if err := action(ctx, cmd); err != nil {
				return &cmdError{cmd: name, err: err}
			}
			return nil
		}
		onUsage := c.OnUsageError
		c.OnUsageError = func(ctx context.Context, cmd *cli.Command, err error, sub bool) error {
			if onUsage != nil { // the command's own answer (retain prints its input)
				return &cmdError{cmd: name, err: onUsage(ctx, cmd, err, sub)}
			}
			return &cmdError{cmd: name, err: commandUsageError(cmd, err)}
		}
		c.StopOnNthArg = stopAtFirstArg
		for _, fl := range c.Flags {
			setHelpLine(fl)
		}
		app.Commands = append(app.Commands, c)
	}
	for _, fl := range app.Flags {
		setHelpLine(fl)
	}
	return app
}

// flags returns the flags of the named settings, with their environment
// variables and config keys in the help text (they are resolved here, not
// by the flag library, so that each value's source is known).
func flags(names ...string) []cli.Flag {
	var out []cli.Flag
	for _, n := range names {
		s, ok := config.Lookup(n)
		if !ok {
			panic("unknown setting " + n)
		}
		usage := fmt.Sprintf("%s (env %s, config %s)", s.Usage, s.Env(), s.Key())
		if s.Kind == config.Bool {
			out = append(out, &cli.BoolFlag{Name: s.Flag, Usage: usage})
			continue
		}
		out = append(out, &cli.StringFlag{Name: s.Flag, Usage: usage, DefaultText: s.Default})
	}
	return out
}

// globalNames are the settings every command takes, before or after its
// name.
var globalNames = []string{"runs-dir", "store", "run", "config", "json"}

// appFlags are the global flags as retval's own, for "retval --run R peek".
// They are local to retval itself (v3 would otherwise offer them to every
// command, which has its own).
func appFlags() []cli.Flag {
	fs := flags(globalNames...)
	for _, f := range fs {
		switch f := f.(type) {
		case *cli.StringFlag:
			f.Local = true
		case *cli.BoolFlag:
			f.Local = true
		}
	}
	return fs
}

// globalFlags are on every command.
func globalFlags(extra ...string) []cli.Flag {
	return flags(append(slices.Clone(globalNames), extra...)...)
}

func init() {
	config.Settings = append(config.Settings, config.Setting{Flag: "config", Kind: config.String, Usage: "TOML or YAML file with any of these settings"})
}

// configPath is the config file to read: the one given (--config or
// RETVAL_CONFIG), else the user's file where there is one, else "".
func configPath(given string) string {
	if given != "" {
		return given
	}
	if p := config.UserFile(); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// lenientConfig are the commands that run something on the user's
// behalf — a command (exec), an MCP server (mcp proxy), a tool call's
// hook: for them a config key that names no setting (a typo, or a key of
// a newer retval) is a warning, so that it cannot silently take away a
// build or a client's tools. Every other command refuses it (exit 2),
// "retval config" and cron's gc included: a typo must not leave a limit
// at its default unseen.
var lenientConfig = map[string]bool{"exec": true, "mcp": true, "hook": true}

// settings resolves every setting for this invocation.
func settings(c *cli.Command) (*config.Resolved, error) {
	g := givenFlags(c)
	file := config.File{}
	cfgText, cfgSet := g.value(mustSetting("config"))
	cfg := config.Resolve(mustSetting("config"), cfgText, cfgSet, config.File{})
	if path := configPath(cfg.Text); path != "" {
		f, err := config.LoadFile(path)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		if err := f.Check(); err != nil {
			if !lenientConfig[c.Name] {
				return nil, usageErr("%v", err)
			}
			fmt.Fprintf(envOf(c).stderr, "retval: %s: warning: %v: ignored\n", c.Name, err)
		}
		file = f
	}
	values := map[string]config.Value{}
	for _, s := range config.Settings {
		text, set := g.value(s)
		values[s.Flag] = config.Resolve(s, text, set, file)
	}
	r, err := config.Build(values)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return r, nil
}

func mustSetting(name string) config.Setting {
	s, _ := config.Lookup(name)
	return s
}

// given is what the command line gave, command by command from the one
// running up to retval itself: the flags each command defines, by name.
// (In urfave/cli v3 a flag holds its own value and knows whether it was
// set.) Each flag is asked its names once per invocation, not once per
// setting: asking for every setting of every flag of the lineage cost a
// small peek ≈1 ms and 3,000 allocations under v2.
type given []map[string]cli.Flag

func givenFlags(c *cli.Command) given {
	var g given
	for _, cmd := range c.Lineage() {
		byName := make(map[string]cli.Flag, len(cmd.Flags))
		for _, f := range cmd.Flags {
			for _, n := range f.Names() {
				byName[n] = f
			}
		}
		g = append(g, byName)
	}
	return g
}

// value is the value of setting s given as a flag: the command's own,
// else one given before the command's name ("retval --run R peek ID"),
// to its parent command or to retval itself, the nearest first.
func (g given) value(s config.Setting) (string, bool) {
	for _, byName := range g {
		f, ok := byName[s.Flag]
		if !ok || !f.IsSet() {
			continue
		}
		return fmt.Sprint(f.Get()), true
	}
	return "", false
}

// needRun returns the run id or a usage error.
func needRun(r *config.Resolved) (string, error) {
	if r.Run == "" {
		return "", usageErr("no run given: use --run R or set RETVAL_RUN")
	}
	return r.Run, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
