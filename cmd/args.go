package cmd

import (
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v3"
)

// interspersed parses flags that follow the positional arguments (the flag
// library stops at the first one: stopAtFirstArg), as in "retval peek c1
// --lines 1-40", the form a stub's read-more line suggests, and returns the
// positional arguments. "--" ends the flags, wherever it stands: everything
// after it is positional, so an id that starts with "-" is reachable.
func interspersed(c *cli.Command) ([]string, error) {
	rest := argsOf(c)
	if afterTerminator(envOf(c).args, rest) {
		return rest, nil
	}
	var pos []string
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			return append(pos, rest[i+1:]...), nil
		}
		if !isFlag(a) {
			pos = append(pos, a)
			continue
		}
		if badFlagSyntax(a) {
			return nil, usageErr("bad flag syntax: %s", a)
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := commandFlagOf(c, name)
		if f == nil {
			return nil, unknownFlag(c.Flags, name)
		}
		if _, isBool := f.(*cli.BoolFlag); isBool && !hasValue {
			value, hasValue = "true", true
		}
		if !hasValue && name == "outline" && (i+1 == len(rest) || !isPointerArg(rest[i+1])) {
			// peek's --outline takes its pointer optionally: without one
			// it outlines the whole document.
			value, hasValue = "", true
		}
		if !hasValue {
			if i+1 == len(rest) {
				return nil, usageErr("flag needs an argument: %s", a)
			}
			i++
			value = rest[i]
		}
		if err := c.Set(name, value); err != nil {
			return nil, usageErr("invalid value %q for flag %s: %v", value, a, err)
		}
	}
	return pos, nil
}

// argsOf returns the arguments after the flags the flag library parsed,
// as the flag package left them (and urfave/cli v2 with it): v3 also drops
// a "--" that follows the first positional argument ("peek c1 -- -x",
// "exec git log -- FILE"), which is put back here.
func argsOf(c *cli.Command) []string {
	rest := c.Args().Slice()
	raw := envOf(c).args
	if len(rest) == 0 || len(rest) >= len(raw) || slices.Equal(raw[len(raw)-len(rest):], rest) {
		return rest // nothing was dropped
	}
	i := len(raw) - len(rest) - 1
	if i >= 1 && raw[i] == rest[0] && raw[i+1] == "--" && slices.Equal(raw[i+2:], rest[1:]) {
		return slices.Insert(slices.Clone(rest), 1, "--")
	}
	return rest
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

// afterTerminator reports whether the flag library stopped at a "--" just
// before rest (it consumes the "--" itself): then rest is all positional.
// A "--" given as a flag's value (--query --) followed by an argument reads
// the same way; write --query=-- to search for it with flags after it.
func afterTerminator(raw, rest []string) bool {
	i := len(raw) - len(rest) - 1
	return i >= 1 && raw[i] == "--" && slices.Equal(raw[i+1:], rest)
}

// argvCommands take the words after their first positional argument as a
// command line of their own ("retval exec ls --help" asks ls for its
// help), so only the flag library reads their flags.
var argvCommands = map[string]bool{"exec": true}

// helpAsked reports whether --help or -h stands among the flags
// interspersed would read after c's positional arguments ("retval mcp
// proxy --help"), where the flag library, which stops at the first
// positional argument, does not see it. A flag's value is skipped, so
// "peek ID --query --help" searches for "--help".
func helpAsked(c *cli.Command) bool {
	if argvCommands[c.Name] {
		return false
	}
	rest := argsOf(c)
	if afterTerminator(envOf(c).args, rest) {
		return false
	}
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			return false
		}
		if !isFlag(a) || badFlagSyntax(a) {
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name == "help" || name == "h" {
			if !hasValue {
				return true
			}
			if on, err := strconv.ParseBool(value); err == nil && on {
				return true
			}
			continue
		}
		f := commandFlagOf(c, name)
		if f == nil || hasValue || !takesValue(f) {
			continue
		}
		if name == "outline" && (i+1 == len(rest) || !isPointerArg(rest[i+1])) {
			continue
		}
		i++ // the flag's value
	}
	return false
}
