package testenv

import (
	"os"
	"testing"
)

// Symlink is os.Symlink for a test that makes a hostile store: under
// Wine it skips the test instead, since Wine's symlinks are Unix links to
// Windows paths that Windows programs cannot open (what the test would
// check of retval there is Wine's, not Windows').
func Symlink(t testing.TB, oldname, newname string) error {
	t.Helper()
	SkipUnderWine(t, "symlinks Windows programs can open (CreateSymbolicLink makes a Unix link to a Windows path)")
	return os.Symlink(oldname, newname)
}
