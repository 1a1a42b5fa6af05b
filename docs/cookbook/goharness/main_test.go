package main

import (
	"os"
	"path/filepath"
)

// The program in docs/cookbook.md, run against a fresh store.
func Example() {
	dir, _ := os.MkdirTemp("", "goharness-")
	defer os.RemoveAll(dir)
	if err := run(os.Stdout, filepath.Join(dir, "runs"), "session-1"); err != nil {
		panic(err)
	}
	// Output:
	// the model sees 1264 bytes of a 288894-byte result:
	// [retained #toolu_02] 288894 bytes, 50000 lines, sha256:44969d026ed4164dbe77d48d4d359e98ac4057008cafd61723be72bff83e5fd4, complete, exit 0
	// lookup: "100\n101\n102\n"
	// lookup failed (too_large): the selection is 99999 bytes, over the 8192-byte bound of one lookup; narrow it: fewer lines, a shorter byte range or a deeper pointer
	// 49991: 49991
	// 49992: 49992
	// 49993: 49993
	// 49994: 49994
	// 49995: 49995
	// 49996: 49996
	// 49997: 49997
	// 49998: 49998
	// 49999: 49999
	// [15 matches; shown 7-15]
}
