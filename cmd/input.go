package cmd

import (
	"io"
	"os"

	"github.com/urfave/cli/v2"
)

// input opens the FILE argument, or stdin for none or "-".
func input(c *cli.Context, e *env) (io.ReadCloser, error) {
	if c.NArg() > 1 {
		return nil, usageErr("too many arguments: want at most one FILE")
	}
	name := c.Args().First()
	if name == "" || name == "-" {
		return io.NopCloser(e.stdin), nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return f, nil
}
