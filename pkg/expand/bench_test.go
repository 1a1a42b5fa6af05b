package expand

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
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
