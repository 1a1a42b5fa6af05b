//go:build unix

package fsx

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// ReadSmall reads what ReadFile reads and refuses what it refuses.
func TestReadSmall(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	os.WriteFile(p("empty"), nil, 0o600)
	os.WriteFile(p("small"), []byte("hello"), 0o600)
	os.WriteFile(p("max"), bytes.Repeat([]byte("x"), 64), 0o600)
	os.WriteFile(p("big"), bytes.Repeat([]byte("x"), 65), 0o600)
	os.Symlink("small", p("link"))
	syscall.Mkfifo(p("fifo"), 0o600)
	os.Mkdir(p("dir"), 0o700)
	for _, tc := range []struct {
		name string
		want string
		err  error
	}{
		{"empty", "", nil}, {"small", "hello", nil}, {"max", string(bytes.Repeat([]byte("x"), 64)), nil},
		{"big", "", ErrTooLarge}, {"link", "", ErrSymlink}, {"fifo", "", ErrNotRegular}, {"dir", "", ErrNotRegular},
		{"missing", "", os.ErrNotExist},
	} {
		b, err := ReadSmall(p(tc.name), 64)
		b2, err2 := ReadFile(p(tc.name), 64)
		if tc.err == nil && (err != nil || string(b) != tc.want) || tc.err != nil && !errors.Is(err, tc.err) {
			t.Errorf("%s: %q %v, want %q %v", tc.name, b, err, tc.want, tc.err)
		}
		if string(b) != string(b2) || (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Errorf("%s: ReadSmall %q %v, ReadFile %q %v", tc.name, b, err, b2, err2)
		}
	}
}
