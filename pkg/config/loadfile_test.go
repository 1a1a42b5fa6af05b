package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// LoadFile turns each setting's value into the text a flag would give,
// whatever the file's format writes it as, and refuses a value that is no
// setting's (a date, an array, a table) naming the key and what it is.
func TestLoadFileValues(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       map[string]string
		err        string // after "config PATH: "
	}{
		{"c.toml", "threshold = 1024\n", map[string]string{"threshold": "1024"}, ""},
		{"c.toml", "threshold = 0x400\npeek_lines = 1_000\n", map[string]string{"threshold": "1024", "peek_lines": "1000"}, ""},
		{"c.toml", "threshold = \"1KiB\"\ngrace = '2h'\n", map[string]string{"threshold": "1KiB", "grace": "2h"}, ""},
		{"c.toml", "off = true\njson = false\n", map[string]string{"off": "true", "json": "false"}, ""},
		{"c.toml", "peek_lines = 1.5\nthreshold = 1e3\nmax_bytes = -0.0\n", map[string]string{"peek_lines": "1.5", "threshold": "1000", "max_bytes": "-0"}, ""},
		{"c.toml", "peek_lines = -7\n", map[string]string{"peek_lines": "-7"}, ""},
		{"config", "threshold = 7\n", map[string]string{"threshold": "7"}, ""},
		{"config", "threshold: 7\n", map[string]string{"threshold": "7"}, ""},
		{"c.yaml", "threshold: 1024\noff: yes\ngrace: 2h\npeek_lines: 1.5\n", map[string]string{"threshold": "1024", "off": "yes", "grace": "2h", "peek_lines": "1.5"}, ""},
		{"c.yaml", "grace: 2001-12-14\n", nil, "grace: want a number, string or boolean, not a date-time"},
		{"c.toml", "grace = 1979-05-27T07:32:00Z\n", nil, "grace: want a number, string or boolean, not a date-time"},
		{"c.toml", "grace = 1979-05-27 07:32:00\n", nil, "grace: want a number, string or boolean, not a local date-time"},
		{"c.toml", "grace = 1979-05-27\n", nil, "grace: want a number, string or boolean, not a local date"},
		{"c.toml", "grace = 07:32:00\n", nil, "grace: want a number, string or boolean, not a local time"},
		{"c.toml", "threshold = [1, 2]\n", nil, "threshold: want a number, string or boolean, not an array"},
		{"c.toml", "[[threshold]]\nx = 1\n", nil, "threshold: want a number, string or boolean, not an array"},
		{"c.toml", "[threshold]\nx = 1\n", nil, "threshold: want a number, string or boolean, not a table"},
		{"c.toml", "threshold = { x = 1 }\n", nil, "threshold: want a number, string or boolean, not a table"},
		{"c.yaml", "threshold: [1, 2]\n", nil, "threshold: want a number, string or boolean, not an array"},
		{"c.yaml", "threshold: {x: 1}\n", nil, "threshold: want a number, string or boolean, not a table"},
		{"c.yaml", "threshold:\n", nil, "threshold: want a number, string or boolean, not null"},
		{"c.toml", "off = true\n\nthreshold = 1KiB\n", nil, "toml: line 3, column 14: strings must be quoted"},
		{"c.toml", "threshold = 99999999999999999999\n", nil, "toml: line 1, column 13: decimal number is too large to fit in a 64-bit signed integer"},
	} {
		path := filepath.Join(t.TempDir(), c.name)
		if err := os.WriteFile(path, []byte(c.body), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := LoadFile(path)
		if c.err != "" {
			if err == nil || err.Error() != "config "+path+": "+c.err {
				t.Errorf("%s %q: error %v, want config %s: %s", c.name, c.body, err, path, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %q: %v", c.name, c.body, err)
			continue
		}
		if !reflect.DeepEqual(f.Keys, c.want) || len(f.Unknown) > 0 {
			t.Errorf("%s %q: keys %v, unknown %v, want %v", c.name, c.body, f.Keys, f.Unknown, c.want)
		}
	}
}

// A config file nested deeper than any config is refused at once with
// one line naming the file, its line and column: a 1 MiB file of inline
// tables nested inside each other once took tens of GB to decode.
func TestLoadFileDeeplyNested(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.toml")
	body := "threshold = " + strings.Repeat("{a=", (MaxFileSize-20)/3)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadFile(path)
	if err == nil || !strings.HasPrefix(err.Error(), "config "+path+": toml: line 1, column ") {
		t.Fatalf("error %v", err)
	}
}
