package peek

import (
	"fmt"

	"github.com/retval/retval/pkg/retain"
)

// OptionError is a usage error about options of a read, which each front
// end names its own way: `retval peek` as flags (--context), the MCP
// tools as arguments (context). Error renders the flags; Render renders
// any names. Format holds one %s per option, in order.
type OptionError struct {
	Format  string
	Options []string // as the CLI's flags are named, without the dashes
	Args    []any    // the values after the options' names
}

func (e *OptionError) Error() string {
	return e.Render(func(o string) string { return "--" + o })
}

// Render is the message with each option named by name.
func (e *OptionError) Render(name func(option string) string) string {
	args := make([]any, 0, len(e.Options)+len(e.Args))
	for _, o := range e.Options {
		args = append(args, name(o))
	}
	return fmt.Sprintf(e.Format, append(args, e.Args...)...)
}

// optionErr is a usage error naming options.
func optionErr(format string, options []string, args ...any) error {
	return &retain.Error{Code: retain.CodeUsage, Err: &OptionError{Format: format, Options: options, Args: args}}
}
