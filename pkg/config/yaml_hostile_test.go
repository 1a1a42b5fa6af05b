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

// A YAML mapping of more keys than a config could hold is refused before
// it is decoded, naming its line: go.yaml.in/yaml/v3 compares every pair
// of a mapping's keys for duplicates, so 100,000 of them (a 1 MiB file)
// cost a minute of CPU on every retval call.
func TestLoadFileRefusesAWideYAMLMapping(t *testing.T) {
	keys := func(n int, indent string) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "%sk%d: v\n", indent, i)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name, body, err string
	}{
		{"top level", keys(maxYAMLKeys+1, ""), "line 1: a mapping of 1001 keys, more than 1000 (a config holds a few dozen settings)"},
		{"nested", "threshold: 10\nx:\n" + keys(maxYAMLKeys+1, "  "), "line 3: a mapping of 1001 keys, more than 1000 (a config holds a few dozen settings)"},
		{"at the bound", keys(maxYAMLKeys, ""), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := LoadFile(path)
			if tc.err == "" {
				if err != nil || len(f.Unknown) != maxYAMLKeys {
					t.Fatalf("LoadFile = %d unknown keys, %v; want %d and no error", len(f.Unknown), err, maxYAMLKeys)
				}
				return
			}
			if want := "config " + path + ": " + tc.err; err == nil || err.Error() != want {
				t.Fatalf("LoadFile = %v, want %q", err, want)
			}
		})
	}
}
