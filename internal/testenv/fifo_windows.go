package testenv

import "testing"

// Mkfifo skips the test: Windows has no FIFOs in a file system (its named
// pipes live in a namespace of their own, \\.\pipe\), so a store there
// cannot hold one.
func Mkfifo(t testing.TB, path string) {
	t.Helper()
	t.Skip("Windows has no FIFOs in a file system")
}
