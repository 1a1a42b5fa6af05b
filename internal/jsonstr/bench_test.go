package jsonstr

import (
	"io"
	"strings"
	"testing"
)

// BenchmarkUnquoter reads the text of a 16 MiB literal, as the hook and
// the proxy retain a tool's text: lines of ASCII, and lines of accented
// text and escapes.
func BenchmarkUnquoter(b *testing.B) {
	for _, c := range []struct{ name, line string }{
		{"ascii", strings.Repeat("0123456789abcdef", 4)[:62] + `\n`},
		{"mixed", `caf` + "\u00e9" + ` \u00e9t\u00e9 \"q\" \t` + "\u4e16\u754c" + ` \ud83d\ude00 ` + strings.Repeat("x", 20) + `\n`},
	} {
		lit := []byte(`"` + strings.Repeat(c.line, (16<<20)/len(c.line)) + `"`)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(lit)))
			buf := make([]byte, 32<<10)
			for b.Loop() {
				if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{NewUnquoter(lit)}, buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
