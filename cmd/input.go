package cmd

import (
	"io"
	"os"

	"github.com/retval/retval/pkg/config"
	"github.com/urfave/cli/v3"
)

// begin is how a command starts: parse flags given after the positional
// arguments (the flag library stops at the first one), resolve the
// settings, and return the positional arguments.
func begin(c *cli.Command) ([]string, *config.Resolved, error) {
	args, err := interspersed(c)
	if err != nil {
		return nil, nil, err
	}
	r, err := settings(c)
	if err != nil {
		return nil, nil, err
	}
	return args, r, nil
}

// beginRun is begin for a command that needs a run.
func beginRun(c *cli.Command) ([]string, *config.Resolved, string, error) {
	args, r, err := begin(c)
	if err != nil {
		return nil, nil, "", err
	}
	run, err := needRun(r)
	return args, r, run, err
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
