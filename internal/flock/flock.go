//go:build unix

// Package flock takes flock(2) locks on open files. lockedfile (cmd/go's)
// only blocks; gc needs a lock it can try without waiting, and retain needs
// one on a directory's descriptor, so this is the thin layer both use.
package flock

import (
	"errors"
	"os"
	"syscall"
)

// ErrBusy is returned by a non-blocking attempt on a lock somebody holds.
var ErrBusy = errors.New("lock is held by another process")

// Shared blocks until f is locked shared.
func Shared(f *os.File) error { return lock(f, syscall.LOCK_SH) }

// Exclusive blocks until f is locked exclusively.
func Exclusive(f *os.File) error { return lock(f, syscall.LOCK_EX) }

// TryExclusive locks f exclusively or returns ErrBusy at once.
func TryExclusive(f *os.File) error {
	err := lock(f, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrBusy
	}
	return err
}

// TryShared locks f shared or returns ErrBusy at once.
func TryShared(f *os.File) error {
	err := lock(f, syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrBusy
	}
	return err
}

// Unlock releases f's lock. Closing f releases it too.
func Unlock(f *os.File) error { return lock(f, syscall.LOCK_UN) }

func lock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "flock", Path: f.Name(), Err: err}
		}
		return nil
	}
}
