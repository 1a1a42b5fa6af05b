package pairindex

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// naive is Index by definition.
func naive(p []byte, c1, c2 byte, d int) int {
	for i := 0; i+d < len(p); i++ {
		if d >= 0 && p[i] == c1 && p[i+d] == c2 {
			return i
		}
	}
	return -1
}

func check(t *testing.T, p []byte, c1, c2 byte, d int) {
	t.Helper()
	if got, want := Index(p, c1, c2, d), naive(p, c1, c2, d); got != want {
		t.Fatalf("Index(%d bytes, %q, %q, %d) = %d, want %d", len(p), c1, c2, d, got, want)
	}
}

// The generic path alone, as on a machine without AVX2.
func TestIndexGeneric(t *testing.T) {
	defer func(v bool) { useAVX2 = v }(useAVX2)
	useAVX2 = false
	TestIndex(t)
}

// Every length around the block sizes, every distance, a match at every
// place (and none), with matches of one byte alone all around.
func TestIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 200; n++ {
		p := make([]byte, n)
		for i := range p {
			p[i] = "ab"[r.IntN(2)]
		}
		for d := 0; d <= min(n, 70); d++ {
			check(t, p, 'x', 'y', d)
			check(t, p, 'a', 'b', d)
			for at := 0; at+d < n; at += 1 + at/8 {
				q := bytes.Clone(p)
				q[at], q[at+d] = 'x', 'y'
				if d == 0 {
					q[at] = 'x'
					check(t, q, 'x', 'x', 0)
					continue
				}
				check(t, q, 'x', 'y', d)
			}
		}
	}
	check(t, []byte("abc"), 'a', 'c', -1)
}

func FuzzIndex(f *testing.F) {
	f.Add([]byte("2026-11-30T05:00:00Z DEBUG req=1 WARN ERROR x"), byte('E'), byte('R'), 1)
	f.Fuzz(func(t *testing.T, p []byte, c1, c2 byte, d int) {
		if got, want := Index(p, c1, c2, d), naive(p, c1, c2, d); got != want {
			t.Fatalf("Index = %d, want %d", got, want)
		}
	})
}

// The search of the benchmark's ASCII log for "ERROR": every byte of it
// is on one line in five, the pair E,R at distance 1 on none.
func BenchmarkIndex(b *testing.B) {
	var buf bytes.Buffer
	levels := []string{"INFO", "INFO", "INFO", "WARN", "DEBUG"}
	for i := 0; buf.Len() < 1<<20; i++ {
		buf.WriteString("2026-11-30T05:00:00Z " + levels[i%5] + " req=123456789 path=/api/v1/items/42 status=200 dur_ms=7\n")
	}
	p := buf.Bytes()
	b.SetBytes(int64(len(p)))
	b.Run("pair", func(b *testing.B) {
		for b.Loop() {
			if Index(p, 'E', 'R', 1) >= 0 {
				b.Fatal("found")
			}
		}
	})
	b.Run("indexbyte", func(b *testing.B) {
		for b.Loop() {
			for i := 0; ; {
				k := bytes.IndexByte(p[i:], 'E')
				if k < 0 {
					break
				}
				i += k + 1
				if i < len(p) && p[i] == 'R' {
					b.Fatal("found")
				}
			}
		}
	})
}
