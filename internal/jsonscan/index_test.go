package jsonscan

import (
	"math/rand/v2"
	"testing"
)

// classifyBytes is classify a byte at a time.
func classifyBytes(src []byte) blockMasks {
	var m blockMasks
	for k, c := range src[:64] {
		bit := uint64(1) << k
		switch {
		case c == '"':
			m.quote |= bit
		case c == '\\':
			m.bslash |= bit
		case c|0x26 == 0x7f:
			m.brack |= bit
		case c == ',':
			m.comma |= bit
		}
	}
	return m
}

// escapesBytes is escapes a bit at a time: a backslash that is not
// itself escaped escapes the next byte.
func escapesBytes(bslash, esc uint64) (escaped, escape uint64) {
	next := esc != 0
	for k := range 64 {
		bit := uint64(1) << k
		switch {
		case next:
			if bslash&bit == 0 {
				escaped |= bit
			}
			next = false
		case bslash&bit != 0:
			escape |= bit
			next = true
		}
	}
	return escaped, escape
}

// checkClassify compares classify with a byte at a time on the blocks of
// src.
func checkClassify(t *testing.T, src []byte) {
	t.Helper()
	if !hasVector {
		t.Skip("no structural index on this CPU")
	}
	n := len(src) / 64
	got := make([]blockMasks, n)
	classify(src[:64*n], got)
	for j := range n {
		if want := classifyBytes(src[64*j:]); got[j] != want {
			t.Fatalf("block %q: %+v, want %+v", src[64*j:64*j+64], got[j], want)
		}
	}
}

func FuzzClassify(f *testing.F) {
	f.Add([]byte(`{"a": ["b\"", 1, {"c": "Y_y\x7f\\\\"}], "d": [], "é": 0}` + "\x00\xff\xa2\xdc\xfb\xfd"))
	f.Add(lockDoc(512))
	f.Fuzz(func(t *testing.T, src []byte) {
		checkClassify(t, src)
	})
}

// TestClassifyAll: every byte value in every position of a block.
func TestClassifyAll(t *testing.T) {
	src := make([]byte, 64*256)
	for j := range 256 {
		for k := range 64 {
			src[64*j+k] = byte(j + 7*k)
		}
	}
	checkClassify(t, src)
}

func FuzzEscapes(f *testing.F) {
	f.Add(uint64(0b1011_0111_0110), uint64(0))
	f.Add(^uint64(0), uint64(1))
	f.Add(uint64(1)<<63, uint64(1))
	f.Fuzz(func(t *testing.T, bslash, esc uint64) {
		esc &= 1
		escaped, escape := escapes(bslash, esc)
		wantEscaped, wantEscape := escapesBytes(bslash, esc)
		// escapes leaves escaped backslashes out of escaped.
		if escaped&^bslash != wantEscaped&^bslash || escape != wantEscape {
			t.Fatalf("escapes(%064b, %d) = %064b, %064b; want %064b, %064b", bslash, esc, escaped, escape, wantEscaped, wantEscape)
		}
	})
}

func TestEscapesRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(64, 1))
	for range 100000 {
		bslash := r.Uint64()&r.Uint64() | r.Uint64()&r.Uint64()&r.Uint64()<<1
		esc := r.Uint64() & 1
		escaped, escape := escapes(bslash, esc)
		wantEscaped, wantEscape := escapesBytes(bslash, esc)
		if escaped&^bslash != wantEscaped&^bslash || escape != wantEscape {
			t.Fatalf("escapes(%064b, %d) = %064b, %064b; want %064b, %064b", bslash, esc, escaped, escape, wantEscaped, wantEscape)
		}
	}
}

// plainBytes is plain a byte at a time.
func plainBytes(b []byte) bool {
	for _, c := range b {
		if c == '\\' || c >= 0x80 || c < 0x20 {
			return false
		}
	}
	return true
}

func FuzzPlain(f *testing.F) {
	f.Add([]byte("node_modules/pkg-1"))
	f.Add([]byte("node_modules/pkg\x1f"))
	f.Add([]byte("node_modules\\/pkg-1"))
	f.Add([]byte("node_modules/pkg-é"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := plain(b), plainBytes(b); got != want {
			t.Fatalf("plain(%q) = %v, want %v", b, got, want)
		}
	})
}

// TestPlainEveryByte puts every byte value at every place of a word.
func TestPlainEveryByte(t *testing.T) {
	for c := range 256 {
		for k := range 17 {
			b := []byte("abcdefghijklmnopq")
			b[k] = byte(c)
			if got, want := plain(b), plainBytes(b); got != want {
				t.Fatalf("plain(%q) = %v, want %v", b, got, want)
			}
		}
	}
}

// Blocks of bytes drawn from those classify tells apart (and their
// neighbours under c|0x26, and bytes ≥ 0x80), checked against a byte at a
// time: the vector code of every architecture, where fuzzing cannot run
// (an emulated arm64).
func TestClassifyRandom(t *testing.T) {
	alphabet := []byte("\"\\,[]{}Y_y\x7f\x7e\x5d\x59\x22\x5c a0:\x00\x80\xff\xdc")
	r := rand.New(rand.NewPCG(3, 4))
	src := make([]byte, 64*4096)
	for i := range src {
		src[i] = alphabet[r.IntN(len(alphabet))]
		if r.IntN(8) == 0 {
			src[i] = byte(r.IntN(256))
		}
	}
	checkClassify(t, src)
}
