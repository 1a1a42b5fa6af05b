package cmd

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/retval/retval/internal/textdist"

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

// The flag library's errors are not typed, and its wording changes
// between releases: retval reads none of it. When the library refuses a
// command line, retval finds the mistake itself, from the flags the
// command declares — an undefined flag (with the nearest declared name),
// bad syntax, a flag missing its value, a bad boolean — and says it in the
// flag package's words, which retval's help, man pages and scripts keep.
// A refusal retval does not find a reason for is passed on as it is.

// flagProblem is the first mistake among tokens, the words the flag
// library parses as flags of c: those before the first positional
// argument (the library stops there, stopAtFirstArg) or "--". unknown
// makes the error of an undefined flag. nil when it finds none.
func flagProblem(c *cli.Command, tokens []string, unknown func(name string) error) error {
	for i := 0; i < len(tokens); i++ {
		a := tokens[i]
		if a == "--" || !isFlag(a) {
			return nil
		}
		if badFlagSyntax(a) || strings.HasPrefix(a, "---") {
			return usageErr("bad flag syntax: %s", a)
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := commandFlagOf(c, name)
		if f == nil {
			if name == "help" || name == "h" || c.Root() == c && (name == "version" || name == "v") {
				continue
			}
			return unknown(name)
		}
		if !takesValue(f) {
			if hasValue {
				if _, err := strconv.ParseBool(value); err != nil {
					return usageErr("invalid boolean value %q for -%s: parse error", value, name)
				}
			}
			continue
		}
		if !hasValue {
			if i+1 == len(tokens) {
				return usageErr("flag needs an argument: -%s", name)
			}
			i++ // its value
		}
	}
	return nil
}

// commandUsageError is the OnUsageError of a command: the mistake in its
// flags, with a suggestion for a misspelt flag.
func commandUsageError(c *cli.Command, err error) error {
	if p := flagProblem(c, commandTokens(c), func(name string) error { return unknownFlag(c.Flags, name) }); p != nil {
		return p
	}
	return usageErr("%v", err)
}

// rootUsageError is the OnUsageError of "retval" itself, which has no flags
// but the global ones, --help and --version: a flag of the commands given
// before the command's name is the usual mistake.
func rootUsageError(app *cli.Command, args []string, err error) error {
	unknown := func(name string) error { return rootUnknownFlag(app, args, name) }
	if p := flagProblem(app, args[1:], unknown); p != nil {
		return p
	}
	return usageErr("%v", err)
}

// commandTokens are the words of the command line after c's name (the
// first word that names it after retval's own flags and their values).
func commandTokens(c *cli.Command) []string {
	args := envOf(c).args
	root := c.Root()
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == c.Name {
			return args[i+1:]
		}
		if !isFlag(a) {
			break
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if f := commandFlagOf(root, name); f != nil && takesValue(f) && !hasValue {
			i++
		}
	}
	return nil
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
