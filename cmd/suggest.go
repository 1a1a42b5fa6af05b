package cmd

import (
	"errors"
	"fmt"
	"github.com/retval/retval/internal/textdist"
	"strings"

	"github.com/retval/retval/pkg/retain"
	"github.com/urfave/cli/v3"
)

// Hints: the second line of an error message, "hint: …", saying what to do
// next. They travel as a *retain.HintError; report prints the hint under
// the one-line error (--json leaves it out: hints are for people).

// withHint adds a hint line to err, keeping its code.
func withHint(err error, format string, args ...any) error {
	return retain.WithHint(err, fmt.Sprintf(format, args...))
}

// hintOf returns the hint err carries, "" if none.
func hintOf(err error) string {
	var h *retain.HintError
	if errors.As(err, &h) {
		return h.Hint
	}
	return ""
}

// hintFor returns the hint Main adds to an error that carries none, from
// its code: what a person or a script can do about it.
func hintFor(err error, msg string) string {
	switch retain.CodeOf(err) {
	case retain.CodeUnknownReference:
		// A missing value's message already names its catalogue command.
		if !strings.Contains(msg, "retval catalogue") {
			return "retval catalogue --all lists the runs; retval catalogue --run R lists a run's values"
		}
	case retain.CodeCollected:
		return "gc removed the run with every value in it; run the tool again to get its output back"
	}
	var pe *panicError
	if errors.As(err, &pe) {
		return "this is a bug in retval: please report it with the command line that caused it"
	}
	return ""
}

func init() {
	// "retval --help WORD" for no command WORD fails with urfave/cli's
	// "No help topic for 'WORD'", which v3 ends with its suggestion as a
	// bare name; v2 asked "Did you mean "NAME"?".
	suggest := cli.SuggestCommand
	cli.SuggestCommand = func(cmds []*cli.Command, provided string) string {
		if s := suggest(cmds, provided); s != "" {
			return fmt.Sprintf(cli.SuggestDidYouMeanTemplate, s)
		}
		return ""
	}
}

// unknownCommand is the error for "retval NAME" when NAME is no command.
func unknownCommand(app *cli.Command, name string) error {
	err := usageErr("unknown command %q", name)
	var names []string
	for _, c := range app.Commands {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	if s := nearest(name, names); s != "" {
		return withHint(err, "did you mean %q? retval --help lists the commands", "retval "+s)
	}
	return withHint(err, "retval --help lists the commands")
}

// unknownFlag is the usage error for an undefined flag, suggesting the
// nearest flag of the command when one is close.
func unknownFlag(flags []cli.Flag, name string) error {
	err := usageErr("flag provided but not defined: -%s", name)
	if s := nearest(name, flagNames(flags)); s != "" {
		return withHint(err, "did you mean --%s?", s)
	}
	return err
}

// undefinedFlag returns the flag name of the flag library's "flag provided
// but not defined: -NAME" error. (The library offers no typed error for it.)
func undefinedFlag(err error) (string, bool) {
	const prefix = "flag provided but not defined: -"
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, prefix)
	if !ok || strings.HasPrefix(name, "-") { // "---x": bad syntax, see flagError
		return "", false
	}
	return name, true
}

// flagError is a usage error for one of the flag library's other errors,
// in the words of the flag package, which urfave/cli v2 passed on: v3
// writes a flag missing its value as typed ("--lines"), and a bad boolean
// as any bad value. (The library offers no typed errors for them.)
func flagError(c *cli.Command, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: --"); ok {
		// v3 strips two dashes of "---x" and looks for a flag "-x".
		return usageErr("bad flag syntax: ---%s", name)
	}
	if typed, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return usageErr("flag needs an argument: -%s", strings.TrimLeft(typed, "-"))
	}
	var value, name string
	if n, _ := fmt.Sscanf(msg, "invalid value %q for flag -%s", &value, &name); n == 2 {
		name = strings.TrimSuffix(name, ":")
		if f := commandFlagOf(c, name); f != nil {
			if _, isBool := f.(*cli.BoolFlag); isBool {
				return usageErr("invalid boolean value %q for -%s: parse error", value, name)
			}
		}
	}
	return usageErr("%v", err)
}

// commandUsageError is the OnUsageError of a command: its flag errors, with
// a suggestion for a misspelt flag.
func commandUsageError(c *cli.Command, err error) error {
	if name, ok := undefinedFlag(err); ok {
		return unknownFlag(c.Flags, name)
	}
	return flagError(c, err)
}

// rootUsageError is the OnUsageError of "retval" itself, which has no flags
// but the global ones, --help and --version: a flag of the commands given
// before the command's name is the usual mistake.
func rootUsageError(app *cli.Command, args []string, err error) error {
	name, ok := undefinedFlag(err)
	if !ok {
		return flagError(app, err)
	}
	return rootUnknownFlag(app, args, name)
}

// rootUnknownFlag is the usage error for a flag retval itself does not
// take, with a hint at the command it belongs to.
func rootUnknownFlag(app *cli.Command, args []string, name string) error {
	// The command the flag was meant for, if it is on the command line.
	cmds := app.Commands
	for _, a := range args[1:] {
		if c := app.Command(a); c != nil {
			cmds = append([]*cli.Command{c}, cmds...)
			break
		}
	}
	for _, c := range cmds {
		for _, f := range ownFlags(c) {
			for _, n := range f.Names() {
				if n == name {
					return withHint(usageErr("flag provided but not defined: -%s", name),
						"--%s is a flag of the commands: put it after the command's name, as in retval %s --%s …", name, c.Name, name)
				}
			}
		}
	}
	var all []cli.Flag
	for _, c := range app.Commands {
		all = append(all, ownFlags(c)...)
	}
	if s := nearest(name, flagNames(all)); s != "" {
		return withHint(usageErr("flag provided but not defined: -%s", name),
			"did you mean --%s? flags go after the command's name", s)
	}
	return withHint(usageErr("flag provided but not defined: -%s", name), "retval --help lists the commands; retval COMMAND --help their flags")
}

// ownFlags are the flags a command defines, without the --help that
// urfave/cli adds to every command before it parses retval's own flags.
func ownFlags(c *cli.Command) []cli.Flag {
	var out []cli.Flag
	for _, f := range c.Flags {
		if f.Names()[0] != "help" {
			out = append(out, f)
		}
	}
	return out
}

func flagNames(flags []cli.Flag) []string {
	var names []string
	for _, f := range flags {
		names = append(names, f.Names()...)
	}
	return names
}

// nearest returns the candidate closest to s when it is close enough to be
// a likely typo (one edit in a short word, two in a longer one, counting a
// swap of neighbours as one), or a candidate s is a prefix of; "" otherwise.
// Ties go to the earlier candidate.
func nearest(s string, candidates []string) string {
	if len(s) < 3 {
		return "" // too short to guess from
	}
	best, bestD := "", -1
	limit := textdist.Limit(s)
	for _, c := range candidates {
		if len(c) < 2 { // one-letter aliases: a guess would be noise
			continue
		}
		d := editDistance(s, c)
		if d <= limit && (bestD < 0 || d < bestD) {
			best, bestD = c, d
		}
	}
	if best != "" {
		return best
	}
	var match string
	for _, c := range candidates {
		if strings.HasPrefix(c, s) {
			if match != "" && match != c {
				return "" // ambiguous
			}
			match = c
		}
	}
	return match
}

// editDistance is textdist's distance (kept under its old name for the
// callers here).
func editDistance(a, b string) int { return textdist.Distance(a, b) }

// panicError is a panic caught by Main, reported as an internal error.
type panicError struct{ value any }

func (p *panicError) Error() string { return fmt.Sprintf("internal error: %v", p.value) }
