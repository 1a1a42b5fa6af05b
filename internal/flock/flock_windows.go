package flock

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// A Windows byte-range lock is mandatory: while it is held, no other
// handle may read or write the bytes it covers. flock(2) locks are
// advisory, and the store relies on that (a step ledger is read by a
// reader that takes no lock), so every lock here covers one byte far past
// the end of any file the store locks: LockFileEx allows a range beyond
// the end of the file, and I/O on the file's real bytes is never blocked.
// Slot n is the byte at base+n; the locks of different slots on one file
// are independent, as flock(2) locks on two descriptors are.
const base = 1 << 62

// Shared blocks until f is locked shared.
func Shared(f *os.File) error { return lock(f, 0, 0) }

// Exclusive blocks until f is locked exclusively.
func Exclusive(f *os.File) error { return lock(f, 0, windows.LOCKFILE_EXCLUSIVE_LOCK) }

// TryExclusive locks f exclusively or returns ErrBusy at once.
func TryExclusive(f *os.File) error {
	return lock(f, 0, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY)
}

// TryShared locks f shared or returns ErrBusy at once.
func TryShared(f *os.File) error {
	return lock(f, 0, windows.LOCKFILE_FAIL_IMMEDIATELY)
}

// Unlock releases f's lock. Closing f releases it too.
func Unlock(f *os.File) error { return UnlockSlot(f, 0) }

// ExclusiveSlot blocks until slot of f (a small number above 0) is locked
// exclusively: a second lock on the same file, independent of the one
// Shared and Exclusive take. Where Unix can lock a directory's descriptor,
// Windows cannot; a second slot of a file the caller already locks is
// what stands in for it.
func ExclusiveSlot(f *os.File, slot int) error {
	return lock(f, slot, windows.LOCKFILE_EXCLUSIVE_LOCK)
}

// UnlockSlot releases the lock of slot of f; one that is not held is no
// error, as flock(2) has it.
func UnlockSlot(f *os.File, slot int) error {
	off := offset(slot)
	err := windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &off)
	// Not held: Windows says ERROR_NOT_LOCKED, Wine ERROR_LOCK_VIOLATION.
	if err != nil && !errors.Is(err, windows.ERROR_NOT_LOCKED) && !errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return &os.PathError{Op: "UnlockFileEx", Path: f.Name(), Err: err}
	}
	return nil
}

func offset(slot int) windows.Overlapped {
	at := uint64(base + slot)
	return windows.Overlapped{Offset: uint32(at), OffsetHigh: uint32(at >> 32)}
}

func lock(f *os.File, slot int, flags uint32) error {
	off := offset(slot)
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, &off)
	if err == nil {
		return nil
	}
	if flags&windows.LOCKFILE_FAIL_IMMEDIATELY != 0 && (errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING)) {
		return ErrBusy
	}
	return &os.PathError{Op: "LockFileEx", Path: f.Name(), Err: err}
}
