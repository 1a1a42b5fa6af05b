package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzParseSize: any text either fails or gives a size in [0, 2^62] that
// its plain decimal form reads back as, and the unit suffixes multiply.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"0", "20KiB", "16MiB", "1GiB", " 7 K ", "1B", "-1", "4611686018427387904",
		"4611686018427387904B", "4194304GiB", "1e3", "0x10", "+5", "KiB", "1 1", "٣", "\x00", "1KiBKiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			if n != 0 {
				t.Fatalf("%q: error %v with size %d", s, err, n)
			}
			if !strings.Contains(err.Error(), strconv.Quote(s)) {
				t.Fatalf("%q: error does not name the input: %v", s, err)
			}
			return
		}
		if n < 0 || n > 1<<62 {
			t.Fatalf("%q: size %d out of range", s, n)
		}
		back, err := ParseSize(strconv.FormatInt(n, 10))
		if err != nil || back != n {
			t.Fatalf("%q = %d, but its decimal form reads as %d, %v", s, n, back, err)
		}
		for _, u := range []struct {
			suf string
			m   int64
		}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
			if n > (1<<62)/u.m {
				continue
			}
			if m, err := ParseSize(strconv.FormatInt(n, 10) + u.suf); err != nil || m != n*u.m {
				t.Fatalf("%d%s = %d, %v; want %d", n, u.suf, m, err, n*u.m)
			}
		}
	})
}

// FuzzParseDuration: any text either fails or gives a duration ≥ 0 that
// its Go form reads back as exactly; whole days are 24h each.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"0", "1h", "90m", "30d", "0.5d", "1.5h", "-1h", "-1d", "106751d", "106752d", "999999d",
		"1e5d", "NaNd", "Infd", "+Infd", "d", "2562047h47m16.854775807s", "2562047h47m16.854775808s", " 3d ", "1h1d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			if d != 0 {
				t.Fatalf("%q: error %v with duration %v", s, err, d)
			}
			return
		}
		if d < 0 {
			t.Fatalf("%q: negative duration %v", s, d)
		}
		if back, err := ParseDuration(d.String()); err != nil || back != d {
			t.Fatalf("%q = %v, but %q reads as %v, %v", s, d, d.String(), back, err)
		}
		if days, ok := strings.CutSuffix(strings.TrimSpace(s), "d"); ok {
			if k, err := strconv.ParseInt(days, 10, 64); err == nil && d != time.Duration(k)*24*time.Hour {
				t.Fatalf("%q = %v, want %d × 24h", s, d, k)
			}
		}
	})
}

// FuzzLoadFile: random bytes as a TOML, YAML or extension-less config file
// either fail with an error naming the file or give only known keys, each
// with a value that is text (so Resolve/Build see what a flag would give).
func FuzzLoadFile(f *testing.F) {
	seeds := []struct {
		ext  uint8
		body string
	}{
		{0, "threshold = \"1KiB\"\ncompress = \"zstd\"\n"},
		{1, "threshold: 1KiB\noff: true\nmax_run_values: 3\n"},
		{2, "grace = \"2h\"\n"},
		{2, "grace: 2h\n"},
		{0, "[table]\nx = 1\n"},
		{1, "a: &a [*a]\n"},
		{1, "threshold: [1, 2]\n"},
		{0, "thresh0ld = 1\n"},
		{1, "- 1\n- 2\n"},
		{1, "threshold: 1\n---\nthreshold: 2\n"},
		{0, "threshold = 1.5e300\n"},
		{1, "peek_lines: 0x10\n"},
		{1, "\x00\xff"},
	}
	for _, s := range seeds {
		f.Add(s.ext, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, ext uint8, body []byte) {
		name := []string{"c.toml", "c.yaml", "config"}[int(ext)%3]
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, body, 0o600); err != nil {
			t.Fatal(err)
		}
		file, err := LoadFile(path)
		if err != nil {
			if file.Keys != nil {
				t.Fatalf("error %v with settings %v", err, file)
			}
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for k, v := range file.Keys {
			s, ok := lookupKey(k)
			if !ok || s.Key() != k {
				t.Fatalf("unknown key %q accepted", k)
			}
			// Build must take any loaded text without panicking: it
			// either accepts it or names the key.
			values := map[string]Value{}
			for _, st := range Settings {
				values[st.Flag] = Resolve(st, "", false, File{Path: path, Keys: map[string]string{k: v}})
			}
			if _, err := Build(values); err != nil && !strings.Contains(err.Error(), "config key "+k) {
				t.Fatalf("bad value of %s = %q: error does not name the key: %v", k, v, err)
			}
		}
		_ = fmt.Sprint(file)
	})
}
