package mcpresult

import (
	"strings"
	"testing"
)

// BenchmarkSpans finds the text of a tools/call answer of 16 MiB (64-byte
// lines, as internal/e2e/memory's), as the proxy does before Rewrite: the
// frame's members, the result's, its content's elements and the block's
// members; with structuredContent, the text is there twice.
func BenchmarkSpans(b *testing.B) {
	text := `"` + strings.Repeat(strings.Repeat("0123456789abcdef", 4)[:62]+`\n`, (16<<20)/64) + `"`
	for _, c := range []struct {
		name  string
		frame string
	}{
		{"text", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":` + text + `}]}}`},
		{"structured", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":` + text + `}],"structuredContent":{"content":` + text + `}}}`},
	} {
		frame := []byte(c.frame)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(frame)))
			for b.Loop() {
				f, ok := Members(frame)
				if !ok {
					b.Fatal("not an object")
				}
				m, ok := Members(f["result"])
				if !ok {
					b.Fatal("no result")
				}
				content, ok := Elements(m["content"])
				if !ok || len(content) != 1 {
					b.Fatal("no content")
				}
				if block, ok := Members(content[0]); !ok || len(block["text"]) != len(text) {
					b.Fatal("no text")
				}
			}
		})
	}
}
