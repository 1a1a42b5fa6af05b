package flock

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func open(t *testing.T, p string) *os.File {
	t.Helper()
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// Shared locks go together, an exclusive one waits for them all, and
// each open file holds its own (as flock(2) has it, and LockFileEx).
func TestSharedAndExclusive(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	a, b, c := open(t, p), open(t, p), open(t, p)
	if err := Shared(a); err != nil {
		t.Fatal(err)
	}
	if err := TryShared(b); err != nil {
		t.Fatalf("a second shared lock: %v", err)
	}
	if err := TryExclusive(c); !errors.Is(err, ErrBusy) {
		t.Fatalf("exclusive beside shared ones: %v, want ErrBusy", err)
	}
	if err := Unlock(a); err != nil {
		t.Fatal(err)
	}
	if err := Unlock(b); err != nil {
		t.Fatal(err)
	}
	if err := TryExclusive(c); err != nil {
		t.Fatalf("exclusive once the shared ones are gone: %v", err)
	}
	if err := TryShared(a); !errors.Is(err, ErrBusy) {
		t.Fatalf("shared beside an exclusive one: %v, want ErrBusy", err)
	}
	c.Close() // closing lets the lock go too
	if err := TryExclusive(a); err != nil {
		t.Fatalf("exclusive once the holder closed: %v", err)
	}
	if err := Unlock(b); err != nil {
		t.Fatalf("unlocking what is not locked: %v", err)
	}
}

// A lock is advisory: the file's bytes stay readable and writable by
// others (a Windows byte-range lock would forbid both on the bytes it
// covers; the store reads a step ledger a writer holds locked).
func TestLockIsAdvisory(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ledger")
	a, b := open(t, p), open(t, p)
	if _, err := a.WriteString("record"); err != nil {
		t.Fatal(err)
	}
	if err := Exclusive(a); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(b)
	if err != nil || string(got) != "record" {
		t.Fatalf("reading a locked file: %q, %v", got, err)
	}
	if _, err := b.WriteAt([]byte("R"), 0); err != nil {
		t.Fatalf("writing a locked file: %v", err)
	}
	if _, err := a.WriteAt([]byte("!"), 5); err != nil {
		t.Fatalf("the holder writing: %v", err)
	}
}
