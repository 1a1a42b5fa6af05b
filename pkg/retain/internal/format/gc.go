package format

import (
	"errors"
	"fmt"

	"github.com/retval/retval/internal/fsx"
)

// CodeBusy is the code of a lock somebody else holds: a writer's on a run
// gc wanted, or another collector's on the runs-dir.
const CodeBusy Code = "busy"

// ErrBusy matches (errors.Is) every error with CodeBusy.
var ErrBusy = &Error{Code: CodeBusy}

// IsRefusal reports whether err is fsx's refusal of an entry that is not
// what the store holds there.
func IsRefusal(err error) bool { return fsx.Refused(err) || errors.Is(err, fsx.ErrNotDir) }

// RefusedError is a part of the runs-dir's own .retval that the collector
// will not work in (a symlink in place of trash or tombstones, say).
type RefusedError struct {
	Path string // relative to the runs-dir
	Err  error
}

func (e *RefusedError) Error() string { return e.Err.Error() }

func (e *RefusedError) Unwrap() error { return e.Err }

// TrashEntry is what an interrupted collection left in .retval/trash.
type TrashEntry struct {
	Name  string // in the trash
	Path  string // relative to the runs-dir
	Bytes int64  // apparent size of the whole tree
}

// RunChangedError says a run changed between its scan and its collection:
// the reason to collect it may no longer hold.
type RunChangedError struct {
	Run  ID
	What string // "c3.txt appeared", "it was read", ...
}

func (e *RunChangedError) Error() string {
	return fmt.Sprintf("run %s changed since it was scanned: %s", e.Run, e.What)
}

// DebrisError is a debris file that could not be removed.
type DebrisError struct {
	Path string // relative to the runs-dir
	Err  error
}
