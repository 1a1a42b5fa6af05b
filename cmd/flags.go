package cmd

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v3"
)

// Flags as urfave/cli v3 takes them, shown and parsed as v2 did, which
// retval's help, its man pages and its error messages keep.

// setHelpLine makes f's line in the help read as under urfave/cli v2 (see
// flagHelpLine).
func setHelpLine(f cli.Flag) {
	if s, ok := f.(cli.StringerSetter); ok {
		s.SetStringer(flagHelpLine)
	}
}

// flagHelpLine is a flag's line under OPTIONS: its names, each followed by
// the placeholder "value" (or the word quoted `LIKE THIS` in its usage)
// when it takes one, a tab, its usage and its default. v3 would name the
// placeholder after the type ("string", "int") and show no default for a
// boolean.
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
	bits := 64
	if _, isInt := any(T(0)).(int); isInt {
		bits = strconv.IntSize
	}
	v, err := strconv.ParseInt(s, 0, bits)
	if errors.Is(err, strconv.ErrRange) {
		return errors.New("value out of range")
	}
	if err != nil {
		return errors.New("parse error")
	}
	*i.p = T(v)
	return nil
}

func (i *intValue[T]) Get() any { return *i.p }

func (i *intValue[T]) String() string {
	if i.p == nil {
		return "0"
	}
	return strconv.FormatInt(int64(*i.p), 10)
}
