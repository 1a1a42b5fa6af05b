package cmd

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/retval/retval/pkg/config"
	"github.com/urfave/cli/v3"
)

// Flags as urfave/cli v3 takes them, shown as retval's help, its man
// pages and its error messages have always shown them (the words of Go's
// flag package).

// flags returns the flags of the named settings, with their environment
// variables and config keys in the help text (they are resolved by
// opts.settings, not by the flag library, so that each value's source is
// known).
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
	cli.FlagStringer = flagHelpLine
}

// flagHelpLine is a flag's line under OPTIONS: its names, each followed by
// the placeholder "value" (or the word quoted `LIKE THIS` in its usage)
// when it takes one, a tab, its usage and its default. v3's own would name
// the placeholder after the type ("string", "int") and show no default
// for a boolean.
func flagHelpLine(f cli.Flag) string {
	d, ok := f.(cli.DocGenerationFlag)
	if !ok {
		return ""
	}
	placeholder, usage := unquoteUsage(d.GetUsage())
	if d.TakesValue() && placeholder == "" {
		placeholder = "value"
	}
	if def := flagDefault(f); def != "" {
		usage += " (default: " + def + ")"
	}
	var names []string
	for _, n := range f.Names() {
		name := "--" + n
		if utf8.RuneCountInString(n) == 1 {
			name = "-" + n
		}
		if placeholder != "" {
			name += " " + placeholder
		}
		names = append(names, name)
	}
	return strings.Join(names, ", ") + "\t" + strings.TrimSpace(usage)
}

// flagDefault is the default a flag's help and man page show: its
// DefaultText, else its value (quoted for a string, none for an empty
// one, "false" for a boolean); none for --help and --version.
func flagDefault(f cli.Flag) string {
	d, ok := f.(cli.DocGenerationFlag)
	if !ok || !d.IsDefaultVisible() {
		return ""
	}
	if t := d.GetDefaultText(); t != "" {
		return t
	}
	return d.GetValue()
}

// unquoteUsage returns the word quoted in backticks in a flag's usage, the
// placeholder of its value, and the usage without the backticks.
func unquoteUsage(usage string) (placeholder, unquoted string) {
	before, rest, ok := strings.Cut(usage, "`")
	if !ok {
		return "", usage
	}
	name, after, ok := strings.Cut(rest, "`")
	if !ok {
		return "", usage
	}
	return name, before + name + after
}

// optionalFlag is a string flag whose value may be left out: the word
// after it is its value only when takes says so (--outline takes a JSON
// pointer, "" or one starting with "/", and without one outlines the
// whole document). The flag library always takes the next word, so
// explicitValues writes a value left out as "--NAME=" before it parses.
type optionalFlag struct {
	*cli.StringFlag
	takes func(next string) bool
}

// badValue returns why flag f refuses value, in the flag package's words
// ("parse error", "value out of range"; urfave/cli's name Go functions:
// `strconv.ParseInt: parsing "x": invalid syntax`), nil if it takes it.
func badValue(f cli.Flag, value string) error {
	var err error
	switch f.(type) {
	case *cli.BoolFlag:
		_, err = strconv.ParseBool(value)
	case *cli.IntFlag:
		_, err = strconv.ParseInt(value, 0, strconv.IntSize)
	case *cli.Int64Flag:
		_, err = strconv.ParseInt(value, 0, 64)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, strconv.ErrRange):
		return errors.New("value out of range")
	}
	return errors.New("parse error")
}

// isBool reports whether f is a switch: given alone, it is true.
func isBool(f cli.Flag) bool {
	_, ok := f.(*cli.BoolFlag)
	return ok
}

// commandFlagOf is the flag of cmd named name (one of its names), or nil.
func commandFlagOf(cmd *cli.Command, name string) cli.Flag {
	for _, f := range cmd.Flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}
