package fsx

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/windows"
)

// userOpenFlag: Windows has no FIFOs in a file system, so nothing to add.
const userOpenFlag = 0

// separators are what may not be in an entry's name: a path separator
// either way, and ":", which names an alternate data stream on NTFS.
const separators = `/\:`

// openFile opens path with FILE_FLAG_OPEN_REPARSE_POINT, which opens a
// symlink or junction itself rather than what it points at (one is then
// refused as a symlink), and with FILE_SHARE_DELETE, as Unix has it: a
// file open for reading can still be renamed over or removed, and its
// directory renamed (os.OpenFile's handles refuse all three). A DOS
// device name (NUL, CON) opens the device, which OpenFile then refuses as
// not a regular file.
func openFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	p16, err := windows.UTF16PtrFromString(fixLongPath(path))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var access uint32
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_RDONLY:
		access = windows.GENERIC_READ
	case os.O_WRONLY:
		access = windows.GENERIC_WRITE
	case os.O_RDWR:
		access = windows.GENERIC_READ | windows.GENERIC_WRITE
	}
	if flag&os.O_CREATE != 0 {
		access |= windows.GENERIC_WRITE
	}
	if flag&os.O_APPEND != 0 {
		// As syscall.Open: every right GENERIC_WRITE grants but
		// FILE_WRITE_DATA, so that each write goes to the end.
		if flag&os.O_TRUNC == 0 {
			access &^= windows.GENERIC_WRITE
		}
		access |= windows.FILE_APPEND_DATA | windows.FILE_WRITE_ATTRIBUTES | windows.FILE_WRITE_EA | windows.STANDARD_RIGHTS_WRITE | windows.SYNCHRONIZE
	}
	var disposition uint32
	switch {
	case flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL:
		disposition = windows.CREATE_NEW
	case flag&os.O_CREATE != 0:
		disposition = windows.OPEN_ALWAYS
	default:
		disposition = windows.OPEN_EXISTING
	}
	attrs := uint32(windows.FILE_ATTRIBUTE_NORMAL)
	if perm&0o200 == 0 {
		attrs = windows.FILE_ATTRIBUTE_READONLY
	}
	// BACKUP_SEMANTICS lets a directory open for reading, to be refused as
	// not a regular file rather than as access denied.
	attrs |= windows.FILE_FLAG_OPEN_REPARSE_POINT | windows.FILE_FLAG_BACKUP_SEMANTICS
	h, err := windows.CreateFile(p16, access, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, disposition, attrs, 0)
	if err != nil {
		if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
			if fi, lerr := os.Lstat(path); lerr == nil && fi.IsDir() {
				return nil, &PathError{Path: path, Err: ErrNotRegular}
			}
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(h), path)
	if isReparse(f) {
		f.Close()
		return nil, &PathError{Path: path, Err: ErrSymlink}
	}
	if flag&os.O_TRUNC != 0 { // a file just made is empty anyway

		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// openIn opens name of root without following it (see openFile); path is
// for messages.
func openIn(root *os.Root, name, path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := root.OpenFile(name, flag|windows.FILE_FLAG_OPEN_REPARSE_POINT, perm)
	if err != nil {
		var errno windows.Errno
		if errors.Is(err, syscall.EISDIR) || errors.As(err, &errno) && (errno == windows.ERROR_ACCESS_DENIED || errno == windows.ERROR_DIRECTORY) {
			// A directory opened for writing.
			if fi, lerr := root.Lstat(name); lerr == nil && fi.IsDir() {
				return nil, &PathError{Path: path, Err: ErrNotRegular}
			}
		}
		return nil, err
	}
	if isReparse(f) {
		f.Close()
		return nil, &PathError{Path: path, Err: ErrSymlink}
	}
	return f, nil
}

// isReparse reports whether f is a reparse point (a symlink, a junction,
// a mount point) opened as itself.
func isReparse(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var fi windows.ByHandleFileInformation
	var ierr error
	if err := rc.Control(func(h uintptr) { ierr = windows.GetFileInformationByHandle(windows.Handle(h), &fi) }); err != nil || ierr != nil {
		return false
	}
	return fi.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0
}

// isReparseInfo is isReparse for a FileInfo of Lstat.
func isReparseInfo(fi fs.FileInfo) bool {
	if a, ok := fi.Sys().(*windows.Win32FileAttributeData); ok {
		return a.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0
	}
	return fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0
}

// CreateTemp is os.CreateTemp (a new file in dir, opened for reading and
// writing, named pattern with a random string for its last "*"), but
// opened with FILE_SHARE_DELETE (see openFile): a writer renames its
// temporary file into place while it still holds it open, which Windows
// refuses for a file os.CreateTemp made.
func CreateTemp(dir, pattern string) (*os.File, error) {
	if strings.ContainsAny(pattern, separators) {
		return nil, &fs.PathError{Op: "createtemp", Path: pattern, Err: errors.New("pattern contains path separator")}
	}
	prefix, suffix := pattern, ""
	if i := strings.LastIndexByte(pattern, '*'); i >= 0 {
		prefix, suffix = pattern[:i], pattern[i+1:]
	}
	if dir == "" {
		dir = os.TempDir()
	}
	for try := 0; ; try++ {
		name := prefix + strconv.FormatUint(uint64(rand.Uint32()), 10) + suffix
		f, err := openFile(filepath.Join(dir, name), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) && try < 10000 {
			continue
		}
		return f, err
	}
}

// fixLongPath makes an absolute path of MAX_PATH characters or more one
// that Windows accepts (\\?\...), as os does for its own calls.
func fixLongPath(path string) string {
	if len(path) < 248 || strings.HasPrefix(path, `\\?\`) {
		return path
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if strings.HasPrefix(abs, `\\`) {
		return `\\?\UNC\` + abs[2:]
	}
	return `\\?\` + abs
}
