package jsonscan

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// The skips that read the structural index must agree exactly with the
// ones that search for quotes and brackets, on any bytes: position,
// error, count and escape state.

// scanners returns a Scanner of doc from byte at that reads the index,
// and one that does not. With an odd chunk the one that reads the index
// reads doc in memory (NewBytes), else through its io.ReaderAt: the two
// ways of reading must agree too.
func scanners(t *testing.T, doc []byte, at, chunk int) (indexed, words *Scanner) {
	if !hasVector {
		t.Skip("no structural index on this CPU")
	}
	if chunk%2 == 1 {
		indexed = NewBytes(doc, chunk)
		indexed.base = int64(at)
	} else {
		indexed = NewAt(bytes.NewReader(doc), int64(at), int64(len(doc)), chunk)
	}
	words = NewAt(bytes.NewReader(doc), int64(at), int64(len(doc)), chunk)
	words.vec = false
	return indexed, words
}

// checkSkip skips the container whose opening bracket is the first one at
// or after byte at of doc, with both skips, reading chunk bytes at a time.
func checkSkip(t *testing.T, doc []byte, at, chunk int, count bool) {
	t.Helper()
	i := at + bytes.IndexAny(doc[min(at, len(doc)):], "{[")
	if i < at {
		return
	}
	got, want := scanners(t, doc, i, chunk)
	run := func(s *Scanner) error {
		open, err := s.Expect("{[")
		if err != nil {
			t.Fatalf("opening bracket at %d: %v", i, err)
		}
		return s.skipContainer(open, count)
	}
	gerr, werr := run(got), run(want)
	if !reflect.DeepEqual(gerr, werr) || got.Off() != want.Off() || got.commas != want.commas || got.escNext != want.escNext {
		t.Fatalf("skip from %d of %q (chunk %d, count %v): at %d, %d commas, %v; want at %d, %d commas, %v",
			i, doc, chunk, count, got.Off(), got.commas, gerr, want.Off(), want.commas, werr)
	}
}

// checkString skips the string whose opening quote is the first one at or
// after byte at of doc, with both skips, then the string after it.
func checkString(t *testing.T, doc []byte, at, chunk int) {
	t.Helper()
	i := at + bytes.IndexByte(doc[min(at, len(doc)):], '"')
	if i < at {
		return
	}
	got, want := scanners(t, doc, i, chunk)
	for range 2 {
		if _, err := got.Expect(`"`); err != nil {
			return
		}
		if _, err := want.Expect(`"`); err != nil {
			t.Fatalf("string at %d of %q: Expect differs", want.Off(), doc)
		}
		from := got.Off()
		gerr, werr := got.SkipStringBody(), want.SkipStringBody()
		if !reflect.DeepEqual(gerr, werr) || got.Off() != want.Off() || got.escNext != want.escNext {
			t.Fatalf("string from %d of %q (chunk %d): at %d, %v, escNext %v; want at %d, %v, escNext %v",
				from, doc, chunk, got.Off(), gerr, got.escNext, want.Off(), werr, want.escNext)
		}
		if gerr != nil {
			return
		}
	}
}

// checkWalk reads doc from byte at to its end with both skips, a step at
// a time (whitespace, then a string, a container or any other byte), so
// that skips start anywhere in a block and one after another.
func checkWalk(t *testing.T, doc []byte, at, chunk int) {
	t.Helper()
	got, want := scanners(t, doc, min(at, len(doc)), chunk)
	for step := 0; ; step++ {
		gc, gerr := got.Peek()
		wc, werr := want.Peek()
		if gc != wc || !reflect.DeepEqual(gerr, werr) || got.Off() != want.Off() {
			t.Fatalf("walk of %q from %d (chunk %d), step %d: Peek %q at %d, %v; want %q at %d, %v",
				doc, at, chunk, step, gc, got.Off(), gerr, wc, want.Off(), werr)
		}
		if gerr != nil {
			return
		}
		got.Next()
		want.Next()
		switch gc {
		case '"':
			gerr, werr = got.SkipStringBody(), want.SkipStringBody()
		case '{', '[':
			got.commas, want.commas = 0, 0
			gerr, werr = got.skipContainer(gc, step%2 == 0), want.skipContainer(wc, step%2 == 0)
		}
		if !reflect.DeepEqual(gerr, werr) || got.Off() != want.Off() || got.commas != want.commas || got.escNext != want.escNext {
			t.Fatalf("walk of %q from %d (chunk %d), step %d after %q: at %d, %d commas, %v; want at %d, %d commas, %v",
				doc, at, chunk, step, gc, got.Off(), got.commas, gerr, want.Off(), want.commas, werr)
		}
		if gerr != nil {
			return
		}
	}
}

func FuzzSkipContainer(f *testing.F) {
	for _, s := range []string{
		`{"a": [1, {"b": "c]}"}], "d": "\"}"}`,
		`[["\\"], "\\\"]", {"x": "\\\\\\"}"}]`,
		`{"y": "Y_y` + "\x7f" + `", "z": [Y, _, y]}`,
		`{"a": ["b", "c"}]`,
		`{"unterminated": "abc\`,
		`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`,
		"{\n  \"node_modules/x\": {\n    \"version\": \"1.2.3\",\n    \"dev\": true\n  },\n  \"é\": \"\\u00e9\"\n}",
		`{"a": 1, "b": [1, 2, 3], "c": {"d": 1, "e": 2}}`,
		`[`,
		`{"a": "b"`,
	} {
		f.Add([]byte(s), uint8(0), uint8(0), false)
		f.Add([]byte(s), uint8(3), uint8(7), true)
	}
	f.Fuzz(func(t *testing.T, doc []byte, at, chunk uint8, count bool) {
		checkSkip(t, doc, int(at), 1+int(chunk), count)
		checkSkip(t, doc, int(at), ChunkSize, count)
		checkString(t, doc, int(at), 1+int(chunk))
		checkString(t, doc, int(at), ChunkSize)
		checkWalk(t, doc, int(at), 1+int(chunk))
		checkWalk(t, doc, int(at), ChunkSize)
	})
}

// TestSkipRandom compares the skips on documents drawn from the bytes
// that matter to them, strings and escapes crossing words and chunks.
func TestSkipRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 1))
	pieces := []string{`"`, `\`, `\\`, `\"`, `{`, `}`, `[`, `]`, `,`, ` `, "\n", `a`, `Y`, `"abcdefghij"`, `"k": `, `1`, "\xe9", `"a\"b"`}
	for n := 0; n < 20000; n++ {
		var b strings.Builder
		b.WriteString("[{"[r.IntN(2):][:1])
		for range r.IntN(120) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		doc := []byte(b.String())
		chunk := 1 + r.IntN(24)
		if r.IntN(4) == 0 {
			chunk = ChunkSize
		}
		checkSkip(t, doc, 0, chunk, r.IntN(2) == 0)
		checkString(t, doc, r.IntN(len(doc)), chunk)
		checkWalk(t, doc, r.IntN(len(doc)), chunk)
	}
}

// TestSkipDeep: nesting one level past MaxDepth stops at the bracket that
// opens it, in a word read whole or byte by byte.
func TestSkipDeep(t *testing.T) {
	for _, pad := range []int{0, 1, 5} {
		doc := []byte(strings.Repeat(" ", pad) + strings.Repeat("[", MaxDepth+2))
		checkSkip(t, doc, 0, ChunkSize, false)
		checkSkip(t, doc, 0, 1000, true)
	}
}
