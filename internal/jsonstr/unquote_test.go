package jsonstr

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

var unquoteCases = []string{
	`""`, `"plain"`, `"a\nb\tc\\d\"e\/f\b\f\r"`, `"\u00e9\u4e16"`, `"\ud83d\ude00"`,
	`"\ud83d"`, `"\ud83dx"`, `"\ude00\ud83d"`, `"\ud83d\u0041"`, `"\ud83d\ud83d\ude00"`,
	"\"caf\xc3\xa9\"", "\"bad \xff byte\"", "\"cut \xe4\xb8\"", `"\u2028\u0000"`,
	"\"" + string(make([]byte, 0)) + "long " + string([]byte{0xe4, 0xb8, 0x96}) + "\"",
	`"\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\ud83d\ude00\ud83d\ude00\ud83d\ude00\ud83d\ude00\ud83d\ude00\ud83d\ude00"`,
	"\"" + strings.Repeat("\xff", 40) + strings.Repeat("\\ud800", 10) + strings.Repeat("\xe4\xb8\x96", 30) + "\"",
}

// The text read is what json.Unmarshal decodes, read in pieces of any size.
func checkUnquote(t *testing.T, lit string) {
	var want string
	if err := json.Unmarshal([]byte(lit), &want); err != nil {
		return // not a JSON string: nothing is promised
	}
	if n := UnquotedLen([]byte(lit)); n != int64(len(want)) {
		t.Errorf("UnquotedLen(%q) = %d, want %d", lit, n, len(want))
	}
	for _, r := range []io.Reader{NewUnquoter([]byte(lit)), iotest.OneByteReader(NewUnquoter([]byte(lit))), iotest.HalfReader(NewUnquoter([]byte(lit)))} {
		got, err := io.ReadAll(r)
		if err != nil || string(got) != want {
			t.Errorf("read %q: %q, %v; want %q", lit, got, err, want)
		}
	}
	// Reads of every size up to twice the Unquoter's own buffer: each
	// escape and UTF-8 sequence falls across the end of a read.
	for n := 1; n <= 130; n++ {
		u := NewUnquoter([]byte(lit))
		var got []byte
		buf := make([]byte, n)
		for {
			k, err := u.Read(buf)
			got = append(got, buf[:k]...)
			if err == io.EOF {
				break
			}
			if err != nil || k == 0 {
				t.Fatalf("read %q %d bytes at a time: %d, %v", lit, n, k, err)
			}
		}
		if string(got) != want {
			t.Fatalf("read %q %d bytes at a time: %q; want %q", lit, n, got, want)
		}
	}
}

func TestUnquoter(t *testing.T) {
	for _, lit := range unquoteCases {
		checkUnquote(t, lit)
	}
}

func FuzzUnquoter(f *testing.F) {
	for _, lit := range unquoteCases {
		f.Add(lit)
	}
	f.Fuzz(checkUnquote)
}
