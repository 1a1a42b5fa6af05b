package cmd

import (
	"fmt"
	"sync"

	"github.com/retval/retval/pkg/retain"
)

// logStore opens the store for a command whose output is accounted for in
// its run's read log: the first failure to append to the log is said on
// stderr, once; the command goes on.
func logStore(dir string, e *env, cmd string) *retain.Store {
	s := retain.Open(dir)
	var once sync.Once
	s.OnLogError = func(err error) {
		once.Do(func() { fmt.Fprintf(e.stderr, "retval: %s: warning: %v\n", cmd, err) })
	}
	return s
}
