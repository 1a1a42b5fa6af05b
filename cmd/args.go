package cmd

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// interspersed parses flags that follow the positional arguments (the flag
// library stops at the first one), as in "retval peek c1 --lines 1-40",
// the form a stub's read-more line suggests, and returns the positional
// arguments. "--" ends the flags, wherever it stands: everything after it
// is positional, so an id that starts with "-" is reachable.
func interspersed(c *cli.Context) ([]string, error) {
	rest := c.Args().Slice()
	if afterTerminator(envOf(c).args, rest) {
		return rest, nil
	}
	var pos []string
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			return append(pos, rest[i+1:]...), nil
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := commandFlag(c, name)
		if f == nil {
			return nil, unknownFlag(c.Command.Flags, name)
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

func commandFlag(c *cli.Context, name string) cli.Flag {
	for _, f := range c.Command.Flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

// afterTerminator reports whether the flag library stopped at a "--" just
// before rest (it consumes the "--" itself): then rest is all positional.
// A "--" given as a flag's value (--query --) followed by an argument reads
// the same way; write --query=-- to search for it with flags after it.
func afterTerminator(raw, rest []string) bool {
	i := len(raw) - len(rest) - 1
	if i < 1 {
		return false
	}
	for k, a := range rest {
		if raw[i+1+k] != a {
			return false
		}
	}
	return raw[i] == "--"
}
