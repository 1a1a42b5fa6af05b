//go:build unix

package flock

import (
	"errors"
	"os"
	"syscall"
)

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
