package retain

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
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

// benchLog is the log bench/gen.go writes (`go run bench/gen.go log
// SIZE`), byte for byte: what bench/zstd.sh compresses.
func benchLog(size int) []byte {
	words := []string{"INFO", "WARN", "DEBUG", "ERROR", "naïve", "café", "日本語", "Ελληνικά",
		"worker", "request", "latency", "ok", "retry", "GET /api/v1/items", "user=42"}
	r := rand.New(rand.NewPCG(42, 42))
	b := make([]byte, 0, size+512)
	for i := 1; len(b) < size; i++ {
		b = fmt.Appendf(b, "2026-11-30T12:%02d:%02d.%06d", (i/60)%60, i%60, i%1000000)
		for k := 3 + r.IntN(12); k > 0; k-- {
			b = append(b, ' ')
			b = append(b, words[r.IntN(len(words))]...)
		}
		b = append(b, ' ')
		for k := r.IntN(41); k > 0; k-- {
			b = append(b, 'x')
		}
		b = append(b, '\n')
	}
	return b[:size]
}

// BenchmarkZstdSink compresses a 64 MiB log through the zstd sink on every
// core it uses (the retain's other work left out), into a file.
func BenchmarkZstdSink(b *testing.B) {
	data := benchLog(64 << 20)
	dir := b.TempDir()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		f, err := os.Create(filepath.Join(dir, "v.zst"))
		if err != nil {
			b.Fatal(err)
		}
		s := newZstdSink(f, nil)
		for off := 0; off < len(data); off += 1 << 20 {
			s.Write(data[off:min(off+1<<20, len(data))])
		}
		if _, err := s.Finish(); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// BenchmarkZstdFrameSize compresses a 64 MiB log on one core in frames of
// 256 KiB (FrameSize), 1 MiB and 4 MiB, at the sink's settings: whether a
// larger frame would compress faster, and at what ratio.
func BenchmarkZstdFrameSize(b *testing.B) {
	data := benchLog(64 << 20)
	for _, size := range []int{FrameSize, 1 << 20, 4 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderCRC(true),
				zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(size))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			var dst []byte
			var out int
			for b.Loop() {
				out = 0
				for off := 0; off < len(data); off += size {
					dst = enc.EncodeAll(data[off:min(off+size, len(data))], dst[:0])
					out += len(dst)
				}
			}
			b.ReportMetric(float64(len(data))/float64(out), "ratio")
		})
	}
}
