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
	if versionOnly(args) {
		// The answer the flag library gives, without building the
		// commands: what a script that checks the version waits for is
		// the process's start-up alone.
		printVersion(stdout)
		return exitOK
	}
	return mainFor(commandOf(args), args, stdin, stdout, stderr)
}

// versionOnly reports whether the command line is the version flag alone,
// in any of the spellings the flag library reads as it.
func versionOnly(args []string) bool {
	if len(args) != 2 {
		return false
	}
	switch args[1] {
	case "--version", "-version", "-v", "--v":
		return true
	}
	return false
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
	args = explicitValues(app, args)
	e.args = args
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

// afterTerminator reports whether the flag library stopped at a "--" just
// before rest (it consumes the "--" itself): then rest is all positional.
// A "--" given as a flag's value (--run --) followed by an argument reads
// the same way.
func afterTerminator(raw, rest []string) bool {
	i := len(raw) - len(rest) - 1
	return i >= 1 && raw[i] == "--" && slices.Equal(raw[i+1:], rest)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// stopAtFirstArg makes flag parsing stop at the first positional
// argument: retval's own flags end at the command's name, and exec's at
// the name of the command it runs. Every other command takes its flags
// before and after its arguments, as urfave/cli v3 parses them.
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
		act := c.Action
		onUsage := c.OnUsageError
		c.OnUsageError = func(ctx context.Context, cmd *cli.Command, err error, sub bool) error {
			if onUsage != nil { // the command's own answer (retain prints its input)
				return &cmdError{cmd: name, err: onUsage(ctx, cmd, err, sub)}
			}
			return &cmdError{cmd: name, err: commandUsageError(cmd, err)}
		}
		c.Action = func(ctx context.Context, cmd *cli.Command) error {
			// What the flag library took for arguments may be flags it
			// cannot read ("-5", "-=x" end its flags): a usage error.
			if cmd.StopOnNthArg == nil {
				if p := commandFlagProblem(cmd); p != nil {
					return cmd.OnUsageError(ctx, cmd, p, true)
				}
			}
			if err := act(ctx, cmd); err != nil {
				return &cmdError{cmd: name, err: err}
			}
			return nil
		}
		// "retval peek ID --help": the flag library reads ID as the
		// topic, a command of peek's; the help is peek's own.
		c.CommandNotFound = func(ctx context.Context, cmd *cli.Command, _ string) {
			cli.ShowCommandHelp(ctx, cmd.Root(), name)
		}
		if argvCommands[name] {
			c.StopOnNthArg = stopAtFirstArg
		}
		app.Commands = append(app.Commands, c)
	}
	return app
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
