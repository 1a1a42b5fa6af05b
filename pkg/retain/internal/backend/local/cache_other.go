//go:build !unix && !windows

package local

import "os"

// fileID is a file's identity; on this system it cannot be asked, so the
// cache never holds anything.
type fileID struct{}

func lstatID(string) (fileID, bool)   { return fileID{}, false }
func fstatID(*os.File) (fileID, bool) { return fileID{}, false }
