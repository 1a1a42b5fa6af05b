// Package testenv holds test helpers that several packages' tests share:
// a tiny file system to fill, a read-only view of a directory, and a lock
// held by another process.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retval/retval/internal/flock"
)

// MountTiny mounts a tmpfs of the given size (e.g. "1m") for the test and
// returns its path, or skips the test where that is not allowed (not root,
// no mount rights).
func MountTiny(t testing.TB, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	return dir
}

// MountReadOnly bind-mounts dir read-only at a new path for the test and
// returns that path: a store seen there is on a read-only file system, as
// in a snapshot. It skips the test where mounting is not possible (not
// root, no mount rights), except under CI as root, where the test must run
// and a failed mount fails it.
func MountReadOnly(t testing.TB, dir string) string {
	t.Helper()
	ci := os.Getenv("CI") == "true"
	if os.Geteuid() != 0 {
		t.Skip("a read-only bind mount needs root")
	}
	at := t.TempDir()
	if out, err := exec.Command("mount", "--bind", dir, at).CombinedOutput(); err != nil {
		if ci {
			t.Fatalf("mount --bind %s: %v: %s", dir, err, out)
		}
		t.Skipf("cannot bind-mount here: %v: %s", err, out)
	}
	// Unmount before t.TempDir's own cleanup (cleanups run last first),
	// or the removal would reach into dir through the mount and fail.
	t.Cleanup(func() {
		if out, err := exec.Command("umount", at).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", at, err, out)
		}
	})
	if out, err := exec.Command("mount", "-o", "remount,bind,ro", at).CombinedOutput(); err != nil {
		if ci {
			t.Fatalf("remounting %s read-only: %v: %s", at, err, out)
		}
		t.Skipf("cannot remount read-only here: %v: %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(at, ".probe"), nil, 0o600); err == nil {
		os.Remove(filepath.Join(at, ".probe"))
		t.Fatalf("%s is still writable after a read-only remount", at)
	}
	return at
}

// HoldLockEnv makes a test binary a lock holder (see BecomeLockHolder): a
// lock held by another process is what gc must respect; one held in the
// same process would prove less.
const HoldLockEnv = "RETVAL_TEST_HOLD_LOCK"

// BecomeLockHolder, called first thing in a test binary (TestMain or an
// init), turns the process into a lock holder when HoldLockEnv names a
// lock file: it takes the flock(2) lock (shared, or exclusive after "ex:"),
// prints "locked" and keeps it until its stdin closes, then exits.
func BecomeLockHolder() {
	spec := os.Getenv(HoldLockEnv)
	if spec == "" {
		return
	}
	f, err := os.OpenFile(strings.TrimPrefix(spec, "ex:"), os.O_RDWR|os.O_CREATE, 0o600)
	if err == nil {
		if strings.HasPrefix(spec, "ex:") {
			err = flock.Exclusive(f)
		} else {
			err = flock.Shared(f)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("locked")
	os.Stdin.Read(make([]byte, 1)) // until the test closes our stdin or kills us
	os.Exit(0)
}
