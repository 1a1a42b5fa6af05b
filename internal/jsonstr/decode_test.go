package jsonstr

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// decodeCases are string bodies where decoding is easy to get wrong:
// bytes that are not UTF-8, lone and paired surrogates, \u escapes, and
// what is not JSON.
var decodeCases = []string{`abc`, `\"\\\/\b\f\n\r\t`, `\u00e9\ud83d\ude00`, `\ud800`, `\ud800\u0041`, `\udc00\ud800\udc00`,
	`\ud800\ud800\udc00`, "\xff\xfe", "\xed\xa0\x80", `\x`, `\u12`, "a\x01", `a"b`, `\'`, "é😀", `ab\ud83d`, "x\xe9\\ud800",
	"cut \xe4\xb8", `\ud83dx`, `\ud83d\u00`, `\u2028\u0000\uFFFF`, `\uD83D\uDE00`, `\u0`, `\`, "\xf0\x9f\x98"}

// checkDecode: AppendDecoded decodes as encoding/json does; the
// streaming Decoder, fed body in pieces of n bytes, decodes strictly: the
// same text where encoding/json substitutes nothing, bytes that are not
// UTF-8 kept as they are (encoding/json writes U+FFFD for each), and a
// lone surrogate escape an error, at the offset where it starts;
// AppendStrict decodes as the Decoder does.
func checkDecode(t *testing.T, body []byte, n int) {
	t.Helper()
	var want string
	werr := json.Unmarshal(append(append([]byte{'"'}, body...), '"'), &want)
	var out bytes.Buffer
	d := &Decoder{W: &out}
	var err error
	for i := 0; i < len(body) && err == nil; i += n {
		_, err = d.Write(body[i:min(i+n, len(body))])
	}
	if err == nil {
		err = d.Close()
	}
	lone := loneSurrogate(body)
	switch {
	case errors.Is(err, ErrSurrogate):
		if lone < 0 || d.ErrAt() != int64(lone) {
			t.Fatalf("body %q: lone surrogate at %d; the first is at %d", body, d.ErrAt(), lone)
		}
	case lone >= 0 && werr == nil:
		t.Fatalf("body %q: %v; want the lone surrogate at %d", body, err, lone)
	case (err != nil) != (werr != nil):
		t.Fatalf("body %q: error %v, encoding/json says %v", body, err, werr)
	case err == nil && replaceInvalid(out.Bytes()) != want:
		t.Fatalf("body %q: %q, encoding/json says %q", body, out.String(), want)
	}
	whole, err2 := AppendDecoded(nil, body)
	if (err2 != nil) != (werr != nil) || err2 == nil && string(whole) != want {
		t.Fatalf("body %q whole: %q, %v; encoding/json says %q, %v", body, whole, err2, want, werr)
	}
	strict, at, err3 := AppendStrict(nil, body)
	if (err3 == nil) != (err == nil) || err == nil && !bytes.Equal(strict, out.Bytes()) || errors.Is(err3, ErrSurrogate) && at != lone {
		t.Fatalf("body %q strict whole: %q, %v at %d; streaming %q, %v", body, strict, err3, at, out.Bytes(), err)
	}
}

// Every case, written to the Decoder in pieces of every size: each
// escape and UTF-8 sequence split at each of its bytes.
func TestDecodeLikeEncodingJSON(t *testing.T) {
	for _, s := range decodeCases {
		for n := 1; n <= len(s)+1; n++ {
			checkDecode(t, []byte(s), n)
		}
	}
}

func FuzzDecodeString(f *testing.F) {
	for _, s := range decodeCases {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(4))
	}
	f.Fuzz(func(t *testing.T, body []byte, split uint8) {
		checkDecode(t, body, 1+int(split%13))
	})
}

// loneSurrogate returns where the first \u escape of a lone UTF-16
// surrogate starts in a string body, or -1, reading escapes as
// encoding/json does (a high surrogate followed by the escape of a low one
// is a pair).
func loneSurrogate(body []byte) int {
	hex4 := func(i int) rune {
		if i+6 > len(body) || body[i] != '\\' || body[i+1] != 'u' {
			return -1
		}
		v, err := strconv.ParseUint(string(body[i+2:i+6]), 16, 32)
		if err != nil {
			return -1
		}
		return rune(v)
	}
	for i := 0; i < len(body); i++ {
		if body[i] != '\\' {
			continue
		}
		r := hex4(i)
		switch {
		case r < 0:
			i++ // a two-byte escape (or a bad one)
		case r >= 0xd800 && r < 0xdc00:
			if lo := hex4(i + 6); lo >= 0xdc00 && lo < 0xe000 {
				i += 11
				continue
			}
			return i
		case r >= 0xdc00 && r < 0xe000:
			return i
		default:
			i += 5
		}
	}
	return -1
}

// replaceInvalid writes U+FFFD for each byte that is not part of valid
// UTF-8, as encoding/json does.
func replaceInvalid(b []byte) string {
	var s strings.Builder
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			s.WriteRune(utf8.RuneError)
		} else {
			s.Write(b[:size])
		}
		b = b[size:]
	}
	return s.String()
}
