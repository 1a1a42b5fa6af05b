package retain

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

// FuzzValidUTF8 holds the streaming UTF-8 check (the vectorised
// validator, fed in chunks that split sequences anywhere) to
// unicode/utf8.Valid on the whole.
func FuzzValidUTF8(f *testing.F) {
	f.Add([]byte("plain ascii, long enough for the vector path: 0123456789"), uint8(7))
	f.Add([]byte("naïve café 日本語 Ελληνικά 🙂 naïve café 日本語 Ελληνικά 🙂"), uint8(3))
	f.Add([]byte("bad \xff in the middle of a long enough line of text \xe2\x82 end"), uint8(33))
	f.Add(bytes.Repeat([]byte("\xed\xa0\x80"), 20), uint8(2))     // surrogates
	f.Add(bytes.Repeat([]byte("\xf4\x90\x80\x80"), 20), uint8(5)) // past U+10FFFF
	f.Fuzz(func(t *testing.T, b []byte, step uint8) {
		s := newStats(0, false)
		n := int(step)%97 + 1
		for rest := b; len(rest) > 0; {
			k := min(n, len(rest))
			s.add(rest[:k])
			rest = rest[k:]
		}
		got := s.validUTF8()
		if want := utf8.Valid(b); got != want {
			t.Fatalf("streamed in %d-byte chunks: valid = %v, unicode/utf8 says %v", n, got, want)
		}
	})
}
