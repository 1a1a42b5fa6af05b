package jsonscan

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// lockDoc builds a package-lock-shaped document of about size bytes, as
// bench/gen.go's lock.
func lockDoc(size int) []byte {
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

// BenchmarkSkip skips a 32 MiB package lock as one value (SkipValue), and
// counting its members (skipValue with count, as an outline does).
func BenchmarkSkip(b *testing.B) {
	doc := lockDoc(32 << 20)
	for _, count := range []bool{false, true} {
		b.Run(fmt.Sprintf("count=%v", count), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				s := New(bytes.NewReader(doc), int64(len(doc)), 0)
				if _, _, err := s.skipValue(count); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMembers reads the members of the lock's /packages as a pointer
// lookup does: each name compared, each value skipped.
func BenchmarkMembers(b *testing.B) {
	doc := lockDoc(32 << 20)
	at := int64(bytes.Index(doc, []byte(`"packages": {`)) + len(`"packages": `))
	b.SetBytes(int64(len(doc)) - at)
	for b.Loop() {
		s := NewAt(bytes.NewReader(doc), at, int64(len(doc)), 0)
		if _, err := s.Expect("{"); err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := s.Expect(`"`); err != nil {
				b.Fatal(err)
			}
			if _, err := s.Key("node_modules/none"); err != nil {
				b.Fatal(err)
			}
			if _, err := s.Expect(":"); err != nil {
				b.Fatal(err)
			}
			if _, err := s.SkipValue(); err != nil {
				b.Fatal(err)
			}
			c, err := s.Expect(",}")
			if err != nil {
				b.Fatal(err)
			}
			if c == '}' {
				break
			}
		}
	}
}
