package cmd

import (
	"errors"
	"fmt"
	"slices"
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
// bad syntax, a flag missing its value, a value its flag refuses — and
// says it in the flag package's words, which retval's help, man pages and
// scripts keep. A refusal retval does not find a reason for is passed on
// as it is. The same reading finds what the library takes for arguments
// but a person meant as flags ("-5", "-=x", which end its flags).

// flagProblem is the first mistake among words, the command line after
// c's name, read with the flags c declares: up to a "--", and for a
// command that stops at its first positional argument (retval itself,
// exec) up to that. A flag before the first argument is named as the
// flag package names it ("-lines"), one after it as typed ("--lines"),
// as retval has always said them (scripts match on both).
// unknown makes the error of an undefined flag. nil when it finds none.
func flagProblem(c *cli.Command, words []string, unknown func(name string) error) error {
	afterArg := false
	for i := 0; i < len(words); i++ {
		a := words[i]
		if a == "--" {
			return nil
		}
		if !isFlag(a) {
			if c.StopOnNthArg != nil {
				return nil
			}
			afterArg = true
			continue
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
		shown := "-" + name
		if afterArg {
			shown = a
		}
		if isBool(f) {
			switch {
			case !hasValue || badValue(f, value) == nil:
			case afterArg:
				return usageErr("invalid value %q for flag %s: parse error", value, a)
			default:
				return usageErr("invalid boolean value %q for -%s: parse error", value, name)
			}
			continue
		}
		if !hasValue {
			if !takesNext(f, words, i) {
				continue // an optional value left out
			}
			if i+1 == len(words) {
				return usageErr("flag needs an argument: %s", shown)
			}
			i++
			value = words[i]
		}
		if err := badValue(f, value); err != nil {
			return usageErr("invalid value %q for flag %s: %v", value, shown, err)
		}
	}
	return nil
}

// takesNext reports whether the flag f, given as words[i] without "=",
// takes the next word as its value.
func takesNext(f cli.Flag, words []string, i int) bool {
	if isBool(f) {
		return false
	}
	if o, ok := f.(*optionalFlag); ok {
		return i+1 < len(words) && o.takes(words[i+1])
	}
	return true
}

// explicitValues returns args with each optional flag value left out
// written as "--NAME=" ("retval peek ID --outline --lines 3"), so that
// the flag library, which takes the word after a flag as its value, takes
// neither the next flag nor an argument for it.
func explicitValues(app *cli.Command, args []string) []string {
	name, words := commandWords(app, args)
	c := app.Command(name)
	if c == nil {
		return args
	}
	first := len(args) - len(words)
	for i := 0; i < len(words); i++ {
		a := words[i]
		if a == "--" || !isFlag(a) && c.StopOnNthArg != nil {
			break
		}
		if !isFlag(a) {
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := commandFlagOf(c, name)
		switch _, optional := f.(*optionalFlag); {
		case f == nil || hasValue:
		case takesNext(f, words, i):
			i++ // its value
		case optional:
			args = slices.Clone(args)
			args[first+i] = "--" + name + "="
			words = args[first:]
		}
	}
	return args
}

// commandUsageError is the OnUsageError of a command: the mistake in its
// flags, with a suggestion for a misspelt flag.
func commandUsageError(c *cli.Command, err error) error {
	if p := commandFlagProblem(c); p != nil {
		return p
	}
	return usageErr("%v", err)
}

// commandFlagProblem is the first mistake in c's flags, nil if none.
func commandFlagProblem(c *cli.Command) error {
	return flagProblem(c, commandTokens(c), func(name string) error { return unknownFlag(c.Flags, name) })
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

// commandTokens are the words of the command line after c's name.
func commandTokens(c *cli.Command) []string {
	name, words := commandWords(c.Root(), envOf(c).args)
	if name != c.Name {
		return nil
	}
	return words
}

// commandWords returns the first word of args after retval's own flags
// and their values, the name of the command to run, and the words after
// it.
func commandWords(app *cli.Command, args []string) (name string, words []string) {
	for i := 1; i < len(args); i++ {
		a := args[i]
		if !isFlag(a) {
			return a, args[i+1:]
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if f := commandFlagOf(app, name); f != nil && !hasValue && takesNext(f, args, i) {
			i++
		}
	}
	return "", nil
}

// isFlag reports whether a reads as a flag: a dash and something after it.
func isFlag(a string) bool { return len(a) > 1 && a[0] == '-' }

// badFlagSyntax reports whether the flag a is one the flag package calls
// bad syntax: no name, or one that starts with "-" or "=" ("---x", "-=x").
// (urfave/cli v3 hands "-=x" on as an argument.)
func badFlagSyntax(a string) bool {
	name := strings.TrimPrefix(a[1:], "-")
	return name == "" || name[0] == '-' || name[0] == '='
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
