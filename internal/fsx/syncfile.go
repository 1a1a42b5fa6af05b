package fsx

import (
	"os"
	"strconv"
	"sync"
	"sync/atomic"
)

// SyncFile is f.Sync, the one place the store's write path syncs a file
// (Dir.Sync is the one for directories); both count their calls for the
// crash explorer's mutation run (internal/crash).
func SyncFile(f *os.File) error {
	if TestHookSyncFile != nil {
		TestHookSyncFile(f.Name())
	}
	if skipSync() {
		return nil
	}
	return f.Sync()
}

// TestHookSyncFile, when set, sees the name of every file SyncFile syncs
// (as TestHookSync sees directories).
var TestHookSyncFile func(name string)

// skipNth is the fsync to leave out, from RETVAL_TEST_SKIP_FSYNC=N (the
// Nth sync of the process, counting from 1), read once; 0 skips none. It
// exists so that a test can prove the crash explorer sees each missing
// fsync; nothing else sets it.
var (
	skipNth  = sync.OnceValue(func() int64 { n, _ := strconv.ParseInt(os.Getenv("RETVAL_TEST_SKIP_FSYNC"), 10, 64); return n })
	syncSeen atomic.Int64
)

// skipSync counts one sync and reports whether it is the one to leave out.
func skipSync() bool {
	n := skipNth()
	return n > 0 && syncSeen.Add(1) == n
}
