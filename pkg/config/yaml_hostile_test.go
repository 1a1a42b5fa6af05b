package config

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestLoadFileHostileYAML: a YAML config shaped to make a parser work
// once per nesting level, or once per key, on every other one — flow
// collections nested thousands deep, a block mapping of thousands of keys
// — costs LoadFile allocations in proportion to its size, whether it is
// refused (too deep) or read (unknown keys). A parser that copies its
// path at every level, or its entries at every key, allocates
// quadratically and turns a config file under MaxFileSize into minutes
// of work and gigabytes of garbage on every retval call.
//
// go.yaml.in/yaml/v3 allocates about 170 bytes a byte of these files (it
// refuses nesting past 10,000 levels); github.com/goccy/go-yaml v1.19.2,
// whose parser has no depth limit and rebuilds a path per level and the
// entries per key, 3,900 to 88,000 (2.9 GB for the 32 KiB one).
func TestLoadFileHostileYAML(t *testing.T) {
	const allocPerByte = 1024
	var wide strings.Builder
	for i := 0; wide.Len() < 64<<10; i++ {
		fmt.Fprintf(&wide, "k%d: v\n", i)
	}
	for _, tc := range []struct {
		name, body string
	}{
		{"deep flow sequence", "x: " + strings.Repeat("[", 32<<10)},
		{"deep flow mapping", "x: " + strings.Repeat("{a: ", 8<<10)},
		{"wide block mapping", wide.String()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			var err error
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = LoadFile(path)
			runtime.ReadMemStats(&after)
			allocs, bytes := after.Mallocs-before.Mallocs, after.TotalAlloc-before.TotalAlloc
			t.Logf("%d bytes: %d allocations, %d bytes allocated (%v)", len(tc.body), allocs, bytes, err)
			if limit := uint64(len(tc.body)) * allocPerByte; bytes > limit {
				t.Errorf("LoadFile of a %d-byte YAML file allocated %d bytes, more than %d a byte", len(tc.body), bytes, allocPerByte)
			}
		})
	}
}
