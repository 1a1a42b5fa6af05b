package xxh3

import (
	"math/rand/v2"
	"testing"

	upstream "github.com/zeebo/xxh3"
)

// paths runs f once per accumulator this CPU can run: the one chosen at
// start-up, then AVX-512, AVX2, SSE2 and the scalar code each alone.
func paths(t *testing.T, f func(t *testing.T)) {
	t.Run("chosen", f)
	t.Run("avx512", func(t *testing.T) { withAVX512(func() { f(t) }) })
	t.Run("avx2", func(t *testing.T) { withAVX2(func() { f(t) }) })
	t.Run("sse2", func(t *testing.T) { withSSE2(func() { f(t) }) })
	t.Run("generic", func(t *testing.T) { withGeneric(func() { f(t) }) })
}

// TestMatchesUpstream checks Hash, HashString and the streaming Hasher
// (written in uneven pieces) against upstream at every length up to three
// 64 KiB blocks' worth of the interesting sizes and a spread beyond.
func TestMatchesUpstream(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 3<<16+1000)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	var lens []int
	for n := 0; n <= 2048; n++ {
		lens = append(lens, n)
	}
	for n := 2049; n < len(data); n += 1 + r.IntN(4096) {
		lens = append(lens, n)
	}
	lens = append(lens, 1<<16, 1<<16+1, 2<<16, len(data))
	paths(t, func(t *testing.T) {
		for _, n := range lens {
			b := data[:n]
			want := upstream.Hash(b)
			if got := Hash(b); got != want {
				t.Fatalf("Hash of %d bytes = %016x, upstream %016x", n, got, want)
			}
			if got := HashString(string(b)); got != want {
				t.Fatalf("HashString of %d bytes = %016x, upstream %016x", n, got, want)
			}
			h := New()
			for rest := b; len(rest) > 0; {
				k := min(len(rest), 1+r.IntN(700))
				h.Write(rest[:k])
				rest = rest[k:]
			}
			if got := h.Sum64(); got != want {
				t.Fatalf("Hasher of %d bytes = %016x, upstream %016x", n, got, want)
			}
		}
	})
}

func FuzzMatchesUpstream(f *testing.F) {
	f.Add([]byte("retval"), uint(3))
	f.Add(make([]byte, 300), uint(17))
	f.Fuzz(func(t *testing.T, b []byte, split uint) {
		want := upstream.Hash(b)
		if got := Hash(b); got != want {
			t.Fatalf("Hash = %016x, upstream %016x", got, want)
		}
		h := New()
		k := int(split % uint(len(b)+1))
		h.Write(b[:k])
		h.Write(b[k:])
		if got := h.Sum64(); got != want {
			t.Fatalf("Hasher = %016x, upstream %016x", got, want)
		}
	})
}

func BenchmarkHashBlock(b *testing.B) {
	blk := make([]byte, 1<<16)
	b.SetBytes(int64(len(blk)))
	for b.Loop() {
		Hash(blk)
	}
}
