package cmd

import (
	"errors"
	"os"
	"time"
)

// makeFIFO: Windows has no FIFOs in a file system.
func makeFIFO(string) error { return errors.ErrUnsupported }

// lchtimes sets the times of path (the scripts make no symlinks that
// matter on Windows).
func lchtimes(path string, t time.Time) error { return os.Chtimes(path, t, t) }
