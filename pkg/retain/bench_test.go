package retain

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

func BenchmarkSanitizeClean(b *testing.B) {
	for b.Loop() {
		Sanitize("toolu_01AbCdEfGhIjKlMnOpQrStUv")
	}
}

func BenchmarkSanitizeRewrite(b *testing.B) {
	id := "call/" + strings.Repeat("x?", 40)
	for b.Loop() {
		Sanitize(id)
	}
}

func BenchmarkRenderStub(b *testing.B) {
	data := asciiLog()
	st := newStats(1024, false)
	st.add(data)
	d := &Descriptor{}
	st.descriptor(d)
	in := StubInput{ID: "call", Size: d.Size, Lines: d.Lines, SHA256: d.SHA256,
		Head: st.head, Tail: st.tailBytes(), PreviewBytes: 1024, PeekLines: 400}
	for b.Loop() {
		RenderStub(in)
	}
}

// BenchmarkRetain measures the whole write path of a 16 MiB value: hash,
// statistics, index, write, fsync, commit.
func BenchmarkRetain(b *testing.B) {
	data := bigValue(16 << 20)
	L := DefaultLimits()
	L.Threshold, L.MaxValueSize, L.MaxRunBytes, L.MaxRunValues = Unlimited, Unlimited, Unlimited, Unlimited
	s := testStore(b)
	b.SetBytes(int64(len(data)))
	i := 0
	for b.Loop() {
		i++
		_, err := s.Retain(bytes.NewReader(data), io.Discard, RetainOptions{Run: "r", Call: "c" + strings.Repeat("x", i%50) + string(rune('a'+i%26)), Limits: L, Policy: PolicyLegacy})
		if err != nil && CodeOf(err) != CodeConflict {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenAndIndex opens a large value (descriptor, content, index
// check) and finds the start of a line near its end.
func BenchmarkOpenAndIndex(b *testing.B) {
	s := testStore(b)
	data := bigValue(64 << 20)
	retainAll(b, s, "r", "big", data)
	for b.Loop() {
		v, err := s.OpenValue("r", "big")
		if err != nil {
			b.Fatal(err)
		}
		v.Index().LineStart(v.Desc.Lines - 10)
		v.Close()
	}
}
