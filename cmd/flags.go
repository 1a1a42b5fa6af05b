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

// intFlag and int64Flag are urfave/cli's integer flags with the flag
// package's words for a bad value, "parse error" or "value out of range"
// (v3's name Go functions: `strconv.ParseInt: parsing "x": invalid
// syntax`).
type (
	intFlag   = cli.FlagBase[int, cli.IntegerConfig, intValue[int]]
	int64Flag = cli.FlagBase[int64, cli.IntegerConfig, intValue[int64]]
)

type intValue[T int | int64] struct{ p *T }

func (intValue[T]) Create(v T, p *T, _ cli.IntegerConfig) cli.Value {
	*p = v
	return &intValue[T]{p: p}
}

func (intValue[T]) ToString(v T) string { return strconv.FormatInt(int64(v), 10) }

func (i *intValue[T]) Set(s string) error {
	v, err := parseInt[T](s)
	if err != nil {
		return err
	}
	*i.p = v
	return nil
}

// parseInt reads an integer flag's value as the flag package does.
func parseInt[T int | int64](s string) (T, error) {
	bits := 64
	if _, isInt := any(T(0)).(int); isInt {
		bits = strconv.IntSize
	}
	v, err := strconv.ParseInt(s, 0, bits)
	if errors.Is(err, strconv.ErrRange) {
		return 0, errors.New("value out of range")
	}
	if err != nil {
		return 0, errors.New("parse error")
	}
	return T(v), nil
}

func (i *intValue[T]) Get() any { return *i.p }

func (i *intValue[T]) String() string {
	if i.p == nil {
		return "0"
	}
	return strconv.FormatInt(int64(*i.p), 10)
}

// badValue returns why flag f refuses value, nil if it takes it.
func badValue(f cli.Flag, value string) error {
	var err error
	switch f.(type) {
	case *cli.BoolFlag:
		_, err = strconv.ParseBool(value)
		if err != nil {
			err = errors.New("parse error")
		}
	case *intFlag:
		_, err = parseInt[int](value)
	case *int64Flag:
		_, err = parseInt[int64](value)
	}
	return err
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
