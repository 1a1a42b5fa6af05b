// Package flock takes advisory locks on open files: flock(2) on Unix,
// LockFileEx on Windows. lockedfile (cmd/go's) only blocks; gc needs a
// lock it can try without waiting, and retain needs one a writer can hold
// beside its run lock, so this is the thin layer both use.
package flock

import "errors"

// ErrBusy is returned by a non-blocking attempt on a lock somebody holds.
var ErrBusy = errors.New("lock is held by another process")
