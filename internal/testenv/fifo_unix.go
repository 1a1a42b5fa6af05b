//go:build unix

package testenv

import (
	"syscall"
	"testing"
)

// Mkfifo makes a FIFO at path, failing the test where it cannot.
func Mkfifo(t testing.TB, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
}
