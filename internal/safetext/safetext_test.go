package safetext

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppend(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain text\n", "plain text\n"},
		{"tab\tand\nnewline", "tab\tand\nnewline"},
		{"back\\slash", "back\\slash"},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"crlf\r\n", "crlf\\x0d\n"},
		{"\x00\x01\x07\x08\x0b\x0c\x1f", `\x00\x01\x07\x08\x0b\x0c\x1f`},
		{"del\x7f", `del\x7f`},
		{"~", "~"},
		{" ", " "},
		{"c1 \u0080 \u009b \u009f", `c1 \u0080 \u009b \u009f`},
		{"\u00a0 nbsp and é", "\u00a0 nbsp and é"},
		{"bidi \u202a\u202b\u202c\u202d\u202e", `bidi \u202a\u202b\u202c\u202d\u202e`},
		{"isolates \u2066\u2067\u2068\u2069", `isolates \u2066\u2067\u2068\u2069`},
		{"\u2029\u2065\u206a\u2029", "\u2029\u2065\u206a\u2029"},
		{"\u202f", "\u202f"},
		{"emoji 😀 日本", "emoji 😀 日本"},
		{"bad \xff\xfe", `bad \xff\xfe`},
		{"lone cont \x80", `lone cont \x80`},
		{"cut \xf0\x9f\x98", `cut \xf0\x9f\x98`},
		{"overlong \xc0\xaf", `overlong \xc0\xaf`},
		{"surrogate \xed\xa0\x80", `surrogate \xed\xa0\x80`},
		{"C1 as a raw byte \x9b", `C1 as a raw byte \x9b`},
		{"12345678\x1b12345678", `12345678\x1b12345678`},
		{"1234567\n", "1234567\n"},
	} {
		got := string(Append([]byte("pre:"), []byte(tc.in)))
		if got != "pre:"+tc.want {
			t.Errorf("Append(%q) = %q, want %q", tc.in, got[4:], tc.want)
		}
		if n := Len([]byte(tc.in)); n != len(tc.want) {
			t.Errorf("Len(%q) = %d, want %d", tc.in, n, len(tc.want))
		}
		if c := Clean([]byte(tc.in)); c != (tc.in == tc.want) {
			t.Errorf("Clean(%q) = %v", tc.in, c)
		}
	}
}

// TestEveryByteAndCodePoint checks each single byte and each code point in
// the ranges the contract names, and the ones just outside them.
func TestEveryByteAndCodePoint(t *testing.T) {
	for c := 0; c < 0x80; c++ {
		got := string(Append(nil, []byte{byte(c)}))
		want := string(rune(c))
		if c < 0x20 && c != '\t' && c != '\n' || c == 0x7f {
			want = fmt.Sprintf(`\x%02x`, c)
		}
		if got != want {
			t.Errorf("byte %#x: got %q, want %q", c, got, want)
		}
	}
	for c := 0x80; c < 0x100; c++ {
		if got, want := string(Append(nil, []byte{byte(c)})), fmt.Sprintf(`\x%02x`, c); got != want {
			t.Errorf("lone byte %#x: got %q, want %q", c, got, want)
		}
	}
	for r := rune(0x70); r < 0x3000; r++ {
		in := string(r)
		got := string(Append(nil, []byte(in)))
		want := in
		if r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
			want = fmt.Sprintf(`\u%04x`, r)
		} else if r < 0x80 {
			continue
		}
		if got != want {
			t.Errorf("U+%04X: got %q, want %q", r, got, want)
		}
	}
}

// reference is the contract written the slow, obvious way.
func reference(p []byte) string {
	var b strings.Builder
	for len(p) > 0 {
		r, size := utf8.DecodeRune(p)
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, p[0])
		case r < 0x20 && r != '\t' && r != '\n' || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.Write(p[:size])
		}
		p = p[size:]
	}
	return b.String()
}

// checkSafe fails unless out is valid UTF-8 holding no C0 control but tab
// and newline, no DEL, no C1 control and no bidi control.
func checkSafe(t *testing.T, out []byte) {
	t.Helper()
	if !utf8.Valid(out) {
		t.Fatalf("output is not valid UTF-8: %q", out)
	}
	for _, r := range string(out) {
		if r < 0x20 && r != '\t' && r != '\n' || r == 0x7f ||
			r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
			t.Fatalf("output holds U+%04X: %q", r, out)
		}
	}
}

var seeds = []string{
	"", "hello\n", "\x1b[2J\x1b]0;title\x07", "\r\n", "\u009b31m", "\u202eevil\u202c",
	"\u2066x\u2069", "\xff", "\xf0\x9f\x98\x80", "\xf0\x9f\x98", "a\xe2\x80", "é\x00日本\x7f",
	"0123456789abcdef\x1b0123456789abcdef", "\xc2\x80\xc2\x9f\xc2\xa0",
}

func FuzzAppend(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		out := Append(nil, p)
		checkSafe(t, out)
		if want := reference(p); string(out) != want {
			t.Fatalf("Append(%q) = %q, want %q", p, out, want)
		}
		if Len(p) != len(out) {
			t.Fatalf("Len(%q) = %d, len(Append) = %d", p, Len(p), len(out))
		}
		if Clean(p) != bytes.Equal(out, p) {
			t.Fatalf("Clean(%q) = %v, but Append gives %q", p, Clean(p), out)
		}
		if Clean(out) != true {
			t.Fatalf("escaped output %q is not clean", out)
		}
	})
}

// FuzzWriter checks that a Writer fed p in pieces cut anywhere writes what
// Append writes for the whole of p.
func FuzzWriter(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s), uint64(0x123456789))
	}
	f.Fuzz(func(t *testing.T, p []byte, cuts uint64) {
		var out bytes.Buffer
		w := NewWriter(&out)
		rest := p
		for len(rest) > 0 {
			n := int(cuts % 5) // pieces of 0 to 4 bytes, then the rest
			cuts /= 5
			if cuts == 0 {
				n = len(rest)
			}
			n = min(n, len(rest))
			if got, err := w.Write(rest[:n]); err != nil || got != n {
				t.Fatalf("Write = %d, %v; want %d, nil", got, err, n)
			}
			rest = rest[n:]
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		checkSafe(t, out.Bytes())
		if want := Append(nil, p); !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("Writer wrote %q for %q, want %q", out.Bytes(), p, want)
		}
	})
}

func TestWriterSplitsEverySequence(t *testing.T) {
	in := []byte("a\u202eb😀c\u009bd\xf0\x9f\x98e日\x1bf\xff")
	want := Append(nil, in)
	for i := 0; i <= len(in); i++ {
		for j := i; j <= len(in); j++ {
			var out bytes.Buffer
			w := NewWriter(&out)
			for _, piece := range [][]byte{in[:i], in[i:j], in[j:]} {
				if _, err := w.Write(piece); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Fatalf("cut at %d,%d: got %q, want %q", i, j, out.Bytes(), want)
			}
		}
	}
}

func TestWriterHoldsIncompleteSequenceUntilFlush(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	w.Write([]byte("x\xe2\x80"))
	if got := out.String(); got != "x" {
		t.Fatalf("after an incomplete sequence: wrote %q, want %q", got, "x")
	}
	w.Flush()
	if got, want := out.String(), `x\xe2\x80`; got != want {
		t.Fatalf("after Flush: %q, want %q", got, want)
	}
	w.Flush()
	if got, want := out.String(), `x\xe2\x80`; got != want {
		t.Fatalf("a second Flush wrote again: %q", got)
	}
}

func TestWriterPassesCleanWritesWithoutCopy(t *testing.T) {
	rec := &recorder{}
	w := NewWriter(rec)
	p := []byte("clean text\n")
	w.Write(p)
	if len(rec.writes) != 1 || &rec.writes[0][0] != &p[0] {
		t.Fatalf("a clean Write was copied or split: %q", rec.writes)
	}
}

type recorder struct{ writes [][]byte }

func (r *recorder) Write(p []byte) (int, error) {
	r.writes = append(r.writes, p)
	return len(p), nil
}

type failing struct{}

var errWrite = errors.New("disk full")

func (failing) Write(p []byte) (int, error) { return 0, errWrite }

func TestWriterReportsErrors(t *testing.T) {
	for _, in := range []string{"clean", "\x1b", "a\xe2"} {
		w := NewWriter(failing{})
		n, err := w.Write([]byte(in))
		if !errors.Is(err, errWrite) || n != 0 {
			t.Errorf("Write(%q) = %d, %v; want 0, %v", in, n, err, errWrite)
		}
	}
	w := NewWriter(failing{})
	if _, err := w.Write([]byte("\xe2")); err != nil {
		t.Fatalf("holding an incomplete sequence wrote nothing yet got %v", err)
	}
	if err := w.Flush(); !errors.Is(err, errWrite) {
		t.Fatalf("Flush = %v, want %v", err, errWrite)
	}
}

var (
	asciiText = bytes.Repeat([]byte("The quick brown fox jumps over the lazy dog.\tfield\n"), 1<<14)
	mixedText = bytes.Repeat([]byte("grüße 日本語 \x1b[1mbold\x1b[0m \u202eevil\r\n"), 1<<14)
)

func BenchmarkClean(b *testing.B) {
	b.SetBytes(int64(len(asciiText)))
	for b.Loop() {
		if !Clean(asciiText) {
			b.Fatal("not clean")
		}
	}
}

func BenchmarkAppendASCII(b *testing.B) {
	dst := make([]byte, 0, len(asciiText))
	b.SetBytes(int64(len(asciiText)))
	for b.Loop() {
		dst = Append(dst[:0], asciiText)
	}
}

func BenchmarkAppendMixed(b *testing.B) {
	dst := make([]byte, 0, 2*len(mixedText))
	b.SetBytes(int64(len(mixedText)))
	for b.Loop() {
		dst = Append(dst[:0], mixedText)
	}
}

func BenchmarkWriter(b *testing.B) {
	w := NewWriter(discard{})
	b.SetBytes(int64(len(mixedText)))
	for b.Loop() {
		w.Write(mixedText[:len(mixedText)/2+1])
		w.Write(mixedText[len(mixedText)/2+1:])
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// Unsafe is exactly what Append escapes, code point by code point.
func TestUnsafeIsWhatAppendEscapes(t *testing.T) {
	for r := rune(0); r < 0x3000; r++ {
		s := string(r)
		escapedByAppend := string(Append(nil, []byte(s))) != s
		if Unsafe(r) != escapedByAppend {
			t.Errorf("U+%04X: Unsafe %v, Append escapes it: %v", r, Unsafe(r), escapedByAppend)
		}
	}
}
