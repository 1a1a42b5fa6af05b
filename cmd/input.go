package cmd

import (
	"io"
	"os"

	"github.com/urfave/cli/v2"
)

// input opens the FILE argument, or stdin for none or "-".
func input(c *cli.Context, e *env) (io.ReadCloser, error) {
	args, err := interspersed(c)
	if err != nil {
		return nil, err
	}
	if len(args) > 1 {
		return nil, usageErr("too many arguments: want at most one FILE")
	}
	name := ""
	if len(args) == 1 {
		name = args[0]
	}
	if name == "" || name == "-" {
		return io.NopCloser(e.stdin), nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return f, nil
}
