package fsx

import (
	"os"
	"strconv"
	"strings"
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

// skipped are the syncs to leave out, from RETVAL_TEST_SKIP_FSYNC=N or
// N,M,... (the Nth sync of the process, counting from 1), read once; none
// when it is unset. It exists so that a test can prove the crash explorer
// sees each missing fsync (and each pair that only matters together);
// nothing else sets it.
var (
	skipped = sync.OnceValue(func() map[int64]bool {
		set := map[int64]bool{}
		for _, f := range strings.Split(os.Getenv("RETVAL_TEST_SKIP_FSYNC"), ",") {
			if n, err := strconv.ParseInt(f, 10, 64); err == nil && n > 0 {
				set[n] = true
			}
		}
		return set
	})
	syncSeen atomic.Int64
)

// skipSync counts one sync and reports whether it is one to leave out.
func skipSync() bool {
	s := skipped()
	return len(s) > 0 && s[syncSeen.Add(1)]
}
