package local

import (
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// fileID is what tells a file apart from any other, and from itself
// before a write: a file replaced or written to has another. On Windows:
// its volume and file index, size, and last write and change times.
type fileID struct {
	vol, index       uint64
	size             int64
	written, changed int64
}

// lstatID is the identity of the file at path (not following a link); ok
// is false where it cannot be had or path is not a regular file.
func lstatID(path string) (fileID, bool) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return fileID{}, false
	}
	h, err := windows.CreateFile(p, windows.FILE_READ_ATTRIBUTES, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING, windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return fileID{}, false
	}
	defer windows.CloseHandle(h)
	return idOf(h)
}

// fstatID is the identity of the open file f.
func fstatID(f *os.File) (fileID, bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return fileID{}, false
	}
	var id fileID
	var ok bool
	if err := rc.Control(func(h uintptr) { id, ok = idOf(windows.Handle(h)) }); err != nil {
		return fileID{}, false
	}
	return id, ok
}

func idOf(h windows.Handle) (fileID, bool) {
	var fi windows.ByHandleFileInformation
	if windows.GetFileInformationByHandle(h, &fi) != nil || fi.FileAttributes&(windows.FILE_ATTRIBUTE_DIRECTORY|windows.FILE_ATTRIBUTE_REPARSE_POINT) != 0 {
		return fileID{}, false
	}
	var basic fileBasicInfo
	if windows.GetFileInformationByHandleEx(h, windows.FileBasicInfo, (*byte)(unsafe.Pointer(&basic)), uint32(unsafe.Sizeof(basic))) != nil {
		return fileID{}, false
	}
	return fileID{
		vol:     uint64(fi.VolumeSerialNumber),
		index:   uint64(fi.FileIndexHigh)<<32 | uint64(fi.FileIndexLow),
		size:    int64(fi.FileSizeHigh)<<32 | int64(fi.FileSizeLow),
		written: basic.LastWriteTime,
		changed: basic.ChangeTime,
	}, true
}

// fileBasicInfo is FILE_BASIC_INFO, which x/sys/windows does not declare.
type fileBasicInfo struct {
	CreationTime, LastAccessTime, LastWriteTime, ChangeTime int64
	FileAttributes                                          uint32
	_                                                       uint32
}
