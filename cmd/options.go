package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/retval/retval/pkg/config"
	"github.com/urfave/cli/v3"
)

// Options: each command declares its flags once, in its constructor, each
// bound to a field of the command's options struct (peekOptions,
// retainOptions, …) by the flag's Destination or Action; urfave/cli fills
// the struct as it parses, and the command's body takes the struct, never
// the *cli.Command. A field that is a pointer is a flag whose absence
// means something (nil: not given); a plain field holds the flag's value,
// its default when not given.

// opts is what every command is handed besides its own flags: its
// positional arguments and the settings its command line gave.
type opts struct {
	name string   // the command's name
	args []string // positional arguments
	// given holds the settings given as flags, as typed, by flag name: the
	// command's own, else those given before its name ("retval --run R
	// peek ID"). They are resolved against the environment and the config
	// file by settings, so that each value's source is known.
	given map[string]string
	// local names the command's own flags that were given, in the order
	// it declares them.
	local []string
}

// setTo is the Action of a flag whose absence means something: when the
// command line gives the flag, *p points at its value.
func setTo[T any](p **T) func(context.Context, *cli.Command, T) error {
	return func(_ context.Context, _ *cli.Command, v T) error {
		*p = &v
		return nil
	}
}

// deref is the value p points at, the zero value for nil (a flag not
// given).
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// mark is the Action of a flag whose presence matters besides its value:
// when the command line gives the flag, *given is true.
func mark[T any](given *bool) func(context.Context, *cli.Command, T) error {
	return func(context.Context, *cli.Command, T) error {
		*given = true
		return nil
	}
}

// action is the Action of a command whose options include o: it reads the
// positional arguments and the settings given into o, then runs body.
func action(o *opts, body func(e *env) error) cli.ActionFunc {
	return func(_ context.Context, c *cli.Command) error {
		o.name = c.Name
		o.args = c.Args().Slice()
		if argvCommands[c.Name] {
			o.args = argsOf(c)
		}
		o.given = givenSettings(c)
		o.local = c.LocalFlagNames()
		return body(envOf(c))
	}
}

// givenSettings returns the settings c's command line gives as flags:
// the command's own, else one given to its parent or to retval itself,
// the nearest first. Each flag is asked its names once per invocation,
// not once per setting: asking for every setting of every flag of the
// lineage cost a small peek ≈1 ms and 3,000 allocations under v2.
func givenSettings(c *cli.Command) map[string]string {
	byName := map[string]cli.Flag{}
	lineage := c.Lineage()
	for i := len(lineage) - 1; i >= 0; i-- { // retval first, the command last: the nearest wins
		for _, f := range lineage[i].Flags {
			if !f.IsSet() {
				continue
			}
			for _, n := range f.Names() {
				byName[n] = f
			}
		}
	}
	given := map[string]string{}
	for _, s := range config.Settings {
		if f, ok := byName[s.Flag]; ok {
			given[s.Flag] = fmt.Sprint(f.Get())
		}
	}
	return given
}

// argvCommands take the words after their first positional argument as a
// command line of their own ("retval exec ls --help" asks ls for its
// help): the flag library stops at it (StopOnNthArg).
var argvCommands = map[string]bool{"exec": true}

// argsOf returns the arguments of an argv command as the command line
// gave them: the flag library drops a "--" that follows the first
// positional argument ("exec git log -- FILE" keeps it, but "exec git --
// FILE" would lose it), which is put back here.
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

// lenientConfig are the commands that run something on the user's
// behalf — a command (exec), an MCP server (mcp proxy), a tool call's
// hook: for them a config key that names no setting (a typo, or a key of
// a newer retval) is a warning, so that it cannot silently take away a
// build or a client's tools. Every other command refuses it (exit 2),
// "retval config" and cron's gc included: a typo must not leave a limit
// at its default unseen.
var lenientConfig = map[string]bool{"exec": true, "mcp": true, "hook": true}

// settings resolves every setting for this invocation: the flags given,
// the environment, the config file, the defaults.
func (o *opts) settings(e *env) (*config.Resolved, error) {
	file := config.File{}
	cfgText, cfgSet := o.given["config"]
	cfg := config.Resolve(mustSetting("config"), cfgText, cfgSet, config.File{})
	if path := configPath(cfg.Text); path != "" {
		f, err := config.LoadFile(path)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		if err := f.Check(); err != nil {
			if !lenientConfig[o.name] {
				return nil, usageErr("%v", err)
			}
			fmt.Fprintf(e.stderr, "retval: %s: warning: %v: ignored\n", o.name, err)
		}
		file = f
	}
	values := map[string]config.Value{}
	for _, s := range config.Settings {
		text, set := o.given[s.Flag]
		values[s.Flag] = config.Resolve(s, text, set, file)
	}
	r, err := config.Build(values)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return r, nil
}

// settingsRun is settings for a command that needs a run: the run id, or
// a usage error.
func (o *opts) settingsRun(e *env) (*config.Resolved, string, error) {
	r, err := o.settings(e)
	if err != nil {
		return nil, "", err
	}
	run, err := needRun(r)
	return r, run, err
}

// needRun returns the run id or a usage error.
func needRun(r *config.Resolved) (string, error) {
	if r.Run == "" {
		return "", usageErr("no run given: use --run R or set RETVAL_RUN")
	}
	return r.Run, nil
}

// configPath is the config file to read: the one given (--config or
// RETVAL_CONFIG), else the user's file where there is one, else "".
func configPath(given string) string {
	if given != "" {
		return given
	}
	if p := config.UserFile(); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

func mustSetting(name string) config.Setting {
	s, _ := config.Lookup(name)
	return s
}

// openInput opens the FILE argument, or stdin for none or "-".
func openInput(args []string, e *env) (io.ReadCloser, error) {
	if len(args) > 1 {
		return nil, usageErr("too many arguments: want at most one FILE")
	}
	if len(args) == 0 || args[0] == "-" {
		return io.NopCloser(e.stdin), nil
	}
	f, err := os.Open(args[0])
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return f, nil
}
