package peek

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"regexp"
	"runtime"
	"testing"
	"unicode/utf8"

	"github.com/retval/retval/pkg/retain"
)

// concSource is a value in memory that declares it may be read from
// several goroutines at once (as a plain indexed retain.Value does), in
// multiples of align, and fails reads at failAt when that is ≥ 0.
type concSource struct {
	b      []byte
	lines  int64
	align  int64
	failAt int64
}

func newConc(b []byte, align int64) *concSource {
	m := newMem(b, 0)
	return &concSource{b: b, lines: m.lines, align: align, failAt: -1}
}

func (c *concSource) ReadAt(p []byte, off int64) (int, error) {
	if c.failAt >= 0 && off <= c.failAt && c.failAt < off+int64(len(p)) {
		return 0, retain.Errorf(retain.CodeCorrupt, "block at %d does not match its digest", c.failAt)
	}
	if off >= int64(len(c.b)) {
		return 0, io.EOF
	}
	n := copy(p, c.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (c *concSource) Size() int64             { return int64(len(c.b)) }
func (c *concSource) Lines() int64            { return c.lines }
func (c *concSource) Index() *retain.Index    { return nil }
func (c *concSource) ConcurrentBlocks() int64 { return c.align }

// withReadAhead runs f with queries read in chunks of size bytes by w
// goroutines ahead.
func withReadAhead(size, w int, f func()) {
	defer func(q int, r func() int) { queryChunk, readAheadWorkers = q, r }(queryChunk, readAheadWorkers)
	queryChunk, readAheadWorkers = size, func() int { return w }
	f()
}

// A search read ahead by several goroutines finds what the reference
// finds, with chunk boundaries everywhere, plain and case-folded.
func TestQueryReadAhead(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range 200 {
		data := make([]byte, 50+rng.IntN(3000))
		for j := range data {
			data[j] = byte(rng.IntN(256))
		}
		v := valueFrom(data)
		queries := []string{"a", "ab", "b\r", "é", "zzz", "a€", "🙂 x"}
		o := QueryOptions{Query: queries[rng.IntN(len(queries))], IgnoreCase: i%2 == 1}
		want, werr := refQuery(v, o, Caps{Lines: -1, Bytes: -1})
		for _, ch := range []struct{ size, w int }{{8, 2}, {16, 3}, {64, 4}, {24, 2}} {
			withReadAhead(ch.size, ch.w, func() {
				got, err := query(newConc(v, 8), o, Caps{Lines: -1, Bytes: -1})
				if sameErr(t, "query", err, werr) {
					checkPage(t, "read ahead", got, want, Caps{Lines: -1, Bytes: -1})
				}
			})
		}
	}
}

// A chunk that fails to read (a block that does not match its digest)
// fails the search with its error, however far ahead the others got, and
// no reader is left running.
func TestQueryReadAheadCorrupt(t *testing.T) {
	v := bytes.Repeat([]byte("line of text\n"), 1000)
	for _, failAt := range []int64{0, 100, 6000, int64(len(v)) - 1} {
		withReadAhead(64, 3, func() {
			src := newConc(v, 64)
			src.failAt = failAt
			_, err := query(src, QueryOptions{Query: "text"}, Caps{Lines: -1, Bytes: -1})
			if !errors.Is(err, retain.ErrCorrupt) {
				t.Errorf("fail at %d: err = %v, want corrupt", failAt, err)
			}
		})
	}
}

// foldAlphabet holds runes whose fold orbits have spellings of other
// lengths (k K U+212A, s S U+017F), three members (σ ς Σ), and the
// pieces of valueFrom.
var foldAlphabet = []string{"k", "K", "\u212a", "s", "S", "\u017f", "σ", "ς", "Σ", "é", "É", "a", "A", "\n", "\xe2\x84", "\xff", " "}

// A case-folded query matches exactly the lines RE2's (?i) matches.
func FuzzFolded(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3}, []byte{0})
	f.Add([]byte{3, 4, 5, 13, 6, 7, 8}, []byte{3, 6})
	f.Fuzz(func(t *testing.T, text, query []byte) {
		var v, q []byte
		for _, c := range text {
			v = append(v, foldAlphabet[int(c)%len(foldAlphabet)]...)
		}
		for _, c := range query {
			if s := foldAlphabet[int(c)%len(foldAlphabet)]; s != "\n" {
				q = append(q, s...)
			}
		}
		if len(q) == 0 || len(q) > 12 || !utf8.Valid(q) {
			return // an invalid query is refused (see TestQuery)
		}
		m, err := compileQuery(string(q), false, true)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := m.(fixed); !ok {
			t.Fatalf("query %q is not matched by the fold-aware scan", q)
		}
		re := regexp.MustCompile("(?i)" + regexp.QuoteMeta(string(q)))
		var want []int64
		for _, l := range refSplit(v) {
			if re.Match(bytes.TrimSuffix(l.text, []byte("\n"))) {
				want = append(want, l.start)
			}
		}
		for _, size := range []int{1 << 20, 5, 16} {
			withReadAhead(size, 2, func() {
				r := scanResult{keep: -1}
				if err := m.scan(newConc(v, 1), &r); err != nil {
					t.Fatal(err)
				}
				if len(r.starts) != len(want) || len(want) > 0 && !equalInts(r.starts, want) {
					t.Fatalf("%q in %q: lines at %v, RE2 %v", q, v, r.starts, want)
				}
				for _, s := range r.starts {
					le := s + int64(bytes.IndexByte(append(v[s:], '\n'), '\n'))
					ms, me, err := m.locate(newConc(v, 1), s, le)
					loc := re.FindIndex(v[s:le])
					if err != nil || ms != s+int64(loc[0]) || me != s+int64(loc[1]) {
						t.Fatalf("%q in line %q: locate %d-%d (%v), RE2 %v", q, v[s:le], ms-s, me-s, err, loc)
					}
				}
			})
		}
	})
}

func equalInts(a, b []int64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A peek of a small value allocates in proportion to the value, not a
// whole scan chunk: a running MCP server answers many such calls.
func TestSmallPeekAllocates(t *testing.T) {
	src := newMem([]byte("a\nb\nc\n"), 0)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const calls = 100
	for range calls {
		if _, err := lines(src, 1, 10, DefaultCaps); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / calls; per > 16<<10 {
		t.Errorf("a peek of 6 bytes allocates %d bytes", per)
	}
}

// A plain query finds exactly the places bytes.Index finds, whichever
// bytes tune picks to look for (one, or a pair: here the alphabet is
// small, so the query's bytes are all in the sample).
func FuzzSubstringFind(f *testing.F) {
	f.Add([]byte("ERRORS DEBUG WARN ERROR"), []byte("ERROR"))
	f.Add([]byte("abababbababaab"), []byte("aab"))
	f.Fuzz(func(t *testing.T, text, query []byte) {
		if len(query) == 0 || len(query) > 40 {
			return
		}
		abc := func(b []byte) []byte {
			out := make([]byte, len(b))
			for i, c := range b {
				out[i] = "abER\n"[int(c)%5]
			}
			return out
		}
		// Long enough for the 32- and 64-byte steps of the vector scan.
		v, q := bytes.Repeat(abc(text), 1+200/(len(text)+1)), abc(query)
		s := &substring{q: q, second: -1}
		s.tune(v)
		for from := 0; from <= len(v); {
			got, end := s.find(v, from)
			want := bytes.Index(v[from:], q)
			if want >= 0 {
				want += from
			}
			if got != want || got >= 0 && end != got+len(q) {
				t.Fatalf("find(%q in %q from %d) = %d, %d; want %d (anchor %d, second %d)", q, v, from, got, end, want, s.anchor, s.second)
			}
			if got < 0 {
				break
			}
			from = got + 1
		}
	})
}
