package jsonstr

import (
	"bytes"
	"encoding/json"
	"testing"
)

func encodeStd(p []byte) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(string(p))
	out := b.Bytes()
	return out[1 : len(out)-2] // drop quotes and newline
}

func check(t *testing.T, p []byte) {
	want := encodeStd(p)
	if got := Append(nil, p); !bytes.Equal(got, want) {
		t.Fatalf("Append(%q) = %q, want %q", p, got, want)
	}
	if n := Len(p); n != int64(len(want)) {
		t.Fatalf("Len(%q) = %d, want %d", p, n, len(want))
	}
	for split := 0; split <= len(p); split++ {
		var b bytes.Buffer
		w := &Writer{W: &b}
		w.Write(p[:split])
		w.Write(p[split:])
		w.Close()
		if !bytes.Equal(b.Bytes(), want) {
			t.Fatalf("Writer split %d of %q = %q, want %q", split, p, b.Bytes(), want)
		}
	}
}

func TestEscapeLikeEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "a\"b\\c", "\n\r\t\b\f\x00\x1f", "é€😀", "\xff\xfe", "x\u2028y\u2029", "<&>", "\xe2\x82", "a\xe2\x82"} {
		check(t, []byte(s))
	}
}

func FuzzEscape(f *testing.F) {
	f.Add([]byte("héllo\n\"\xff"))
	f.Fuzz(func(t *testing.T, p []byte) { check(t, p) })
}
