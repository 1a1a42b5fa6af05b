package format

import (
	"fmt"
	"strings"

	"github.com/retval/retval/internal/fsx"
	"github.com/retval/retval/internal/xxh3"
)

// ID names a value inside a run, or a run inside a runs-dir. It is always
// 1–64 characters of [A-Za-z0-9_-], so it can never name a path outside the
// directory that holds it, and never a DOS device name (CON, NUL, COM1, …:
// see fsx.WindowsReserved), so every file named after it can be made on
// Windows too. The only way to make one is Sanitize (or ParseID,
// which accepts only ids that are already clean).
type ID string

// MaxIDLen is the longest id Sanitize produces.
const MaxIDLen = 64

// maxKeep is how many sanitized bytes precede the "-" and hash suffix of an
// id that had to be rewritten: 55 + 1 + 8 = 64.
const maxKeep = 55

// Sanitize maps a call id (or run id) to an ID. An id that is already clean
// is used unchanged; any other has each disallowed byte replaced by "_", is
// cut to 55 bytes and gets "-" plus the first 8 hex digits of the XXH3-64 of
// the original appended, so distinct inputs stay distinct. The empty string
// is an error.
func Sanitize(s string) (ID, error) {
	if s == "" {
		return "", &Error{Code: CodeUsage, Err: fmt.Errorf("empty id")}
	}
	if IsClean(s) {
		return ID(s), nil
	}
	n := min(len(s), maxKeep)
	var b strings.Builder
	b.Grow(MaxIDLen)
	for i := 0; i < n; i++ {
		c := s[i]
		if cleanByte(c) {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
		}
	}
	fmt.Fprintf(&b, "-%016x", xxh3.HashString(s))
	return ID(b.String()[:b.Len()-8]), nil
}

// IsClean reports whether s is usable as an ID unchanged: allowed bytes
// only, and not a name Windows reserves for a device, whatever the system
// (so "nul" is mapped to "nul-<8 hex>", as any other id that is not clean).
func IsClean(s string) bool {
	if len(s) == 0 || len(s) > MaxIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !cleanByte(s[i]) {
			return false
		}
	}
	return !fsx.WindowsReserved(s)
}

func cleanByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// String returns the id as text.
func (id ID) String() string { return string(id) }

// FoldedID reports whether the files of id, on a file system that ignores
// case (NTFS, APFS by default), turned out to be those of found, another
// id that differs only in case: id itself has no value there.
func FoldedID(found, id ID) bool { return found != id && strings.EqualFold(string(found), string(id)) }
