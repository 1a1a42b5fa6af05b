// Command retval keeps big tool results out of an LLM agent's context.
package main

import (
	"os"

	"github.com/retval/retval/cmd"
)

func main() {
	os.Exit(cmd.Main(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
