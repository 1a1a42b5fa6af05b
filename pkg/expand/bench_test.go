package expand

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/retval/retval/internal/jsonscan"
)

// packageLock builds a package-lock-shaped document of n packages.
func packageLock(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"name": "bench", "lockfileVersion": 3, "packages": {`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "\n    \"node_modules/pkg-%d\": {\"version\": \"%d.%d.%d\", \"resolved\": \"https://registry.npmjs.org/pkg-%d/-/pkg-%d-%d.%d.%d.tgz\", \"integrity\": \"sha512-%s==\", \"license\": \"MIT\"}",
			i, i%7, i%13, i%101, i, i, i%7, i%13, i%101, strings.Repeat(string(rune('A'+i%26)), 86))
	}
	b.WriteString("\n  }\n}\n")
	return b.Bytes()
}

func BenchmarkFindPointer(b *testing.B) {
	doc := packageLock(64 << 10)
	p, _ := ParsePointer(fmt.Sprintf("/packages/node_modules~1pkg-%d/version", 32<<10))
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if _, err := FindPointer(bytes.NewReader(doc), int64(len(doc)), p); err != nil {
			b.Fatal(err)
		}
	}
}

// expandBench retains a 16 MiB log and returns an expander and two
// templates that reassemble it from 1,000 line ranges and from the same
// ranges as byte offsets.
func expandBench(b *testing.B) (x *Expander, lines, byteRanges []byte, size int64) {
	var v bytes.Buffer
	words := []string{"INFO", "WARN", "naïve", "café", "日本語", "worker", "GET /api/v1/items", "user=42", "\"quoted\"", "tab\there"}
	var starts []int
	for i := 0; v.Len() < 16<<20-200; i++ {
		starts = append(starts, v.Len())
		fmt.Fprintf(&v, "2026-11-30T12:%02d:%02d.%06d", (i/60)%60, i%60, i%1000000)
		for k := range 3 + i%12 {
			v.WriteString(" " + words[(i*7+k)%len(words)])
		}
		v.WriteString("\n")
	}
	rs := newStore(b, map[string]string{"big": v.String()})
	n := len(starts)
	var lt, bt bytes.Buffer
	lt.WriteString(`{"content": {"$concat": [`)
	bt.WriteString(`{"content": {"$concat": [`)
	for i := range 1000 {
		first, next := i*n/1000, (i+1)*n/1000
		end := v.Len()
		if next < n {
			end = starts[next]
		}
		if i > 0 {
			lt.WriteByte(',')
			bt.WriteByte(',')
		}
		fmt.Fprintf(&lt, `{"$ref": "big", "lines": [%d, %d]}`, first+1, next)
		fmt.Fprintf(&bt, `{"$ref": "big", "bytes": [%d, %d]}`, starts[first], end)
	}
	lt.WriteString("]}}")
	bt.WriteString("]}}")
	return &Expander{Store: rs.Store, Run: rs.Run, MaxBytes: 16 << 20}, lt.Bytes(), bt.Bytes(), int64(v.Len())
}

func BenchmarkExpand(b *testing.B) {
	x, lines, byteRanges, size := expandBench(b)
	for _, tc := range []struct {
		name    string
		tmpl    []byte
		summary bool
	}{{"lines", lines, false}, {"bytes", byteRanges, false}, {"lines+summary", lines, true}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				r, err := x.Expand(tc.tmpl, tc.summary)
				if err != nil {
					b.Fatal(err)
				}
				if r.Len() < size {
					b.Fatal("short output")
				}
			}
		})
	}
}

// lockFile builds a document shaped as bench/gen.go's lock (what the
// pointer and outline rows of bench/run read) of about size bytes: one
// indented object of five-member package objects, "node_modules/last"
// at its end.
func lockFile(size int) []byte {
	var b bytes.Buffer
	b.Grow(size + 256)
	b.WriteString("{\n  \"name\": \"bench\",\n  \"lockfileVersion\": 3,\n  \"packages\": {\n")
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "    \"node_modules/pkg-%d\": {\n      \"version\": \"%d.%d.%d\",\n      \"resolved\": \"https://registry.example/pkg-%d/-/pkg-%d-%d.tgz\",\n      \"integrity\": \"sha512-%016x%016x\",\n      \"dev\": true\n    },\n",
			i, r.IntN(20), r.IntN(50), r.IntN(100), i, i, i, r.Uint64(), r.Uint64())
	}
	b.WriteString("    \"node_modules/last\": {\"version\": \"1.0.0\"}\n  }\n}\n")
	return b.Bytes()
}

// BenchmarkLock is bench/run's pointer and outline rows over a 64 MiB
// document in memory: the scanner's share of them.
func BenchmarkLock(b *testing.B) {
	doc := lockFile(64 << 20)
	b.Run("pointer", func(b *testing.B) {
		p, _ := ParsePointer("/packages/node_modules~1last/version")
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if _, err := FindPointer(bytes.NewReader(doc), int64(len(doc)), p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("outline", func(b *testing.B) {
		p, _ := ParsePointer("/packages")
		o := jsonscan.OutlineOptions{After: -1, Head: 397, Tail: tailShown, MaxName: 4096}
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if _, err := findOutline(bytes.NewReader(doc), 0, int64(len(doc)), p, o, chunkSize); err != nil {
				b.Fatal(err)
			}
		}
	})
}
