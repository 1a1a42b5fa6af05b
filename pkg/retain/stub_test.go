package retain

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/retval/retval/internal/safetext"
)

var update = flag.Bool("update", false, "rewrite golden files")

func testStore(t testing.TB) *Store {
	t.Helper()
	s := Open(filepath.Join(t.TempDir(), "runs"))
	fixed := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return fixed }
	return s
}

func asciiLog() []byte {
	var b bytes.Buffer
	for i := 1; i <= 2000; i++ {
		fmt.Fprintf(&b, "2026-11-30T12:00:%02d INFO worker-%d processed batch %d in %dms\n", i%60, i%7, i, i*37%1000)
	}
	return b.Bytes()
}

func utf8Text() []byte {
	var b bytes.Buffer
	words := []string{"naïve", "café", "日本語", "Ελληνικά", "emoji 😀", "Ünïcödé", "русский"}
	for i := 1; i <= 1500; i++ {
		fmt.Fprintf(&b, "%d %s %s\n", i, words[i%len(words)], strings.Repeat(words[(i*3)%len(words)], 1+i%3))
	}
	return b.Bytes()
}

func binaryBlob() []byte { return binaryBlobN(40000) }

func binaryBlobN(n int) []byte {
	r := rand.New(rand.NewPCG(7, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

func ptr[T any](v T) *T { return &v }

// TestStubGolden retains representative results and compares their stubs
// with testdata/stubs/*.golden (go test -run TestStubGolden -update).
func TestStubGolden(t *testing.T) {
	L := DefaultLimits()
	sample, err := os.ReadFile("../../testdata/samples/go-test-v.log")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		data   []byte
		meta   Meta
		policy Policy
		limits func(*Limits)
	}{
		{name: "ascii-log", data: asciiLog()},
		{name: "go-test-log", data: sample},
		{name: "utf8-text", data: utf8Text()},
		{name: "one-long-line", data: bytes.Repeat([]byte("é0123456789"), 10000)},
		{name: "binary", data: binaryBlob()},
		{name: "just-over-threshold", data: append(bytes.Repeat([]byte("abcdefghij\n"), 20480/11), bytes.Repeat([]byte("z"), 20480%11+1)...)},
		{name: "crlf", data: bytes.Repeat([]byte("windows line\r\n"), 3000)},
		{name: "partial-exit-timeout", data: asciiLog(), meta: Meta{Partial: true, OmittedBytes: ptr(int64(123456)), ExitCode: ptr(2), TimedOut: true}},
		{name: "exit-code-complete", data: asciiLog(), meta: Meta{ExitCode: ptr(1)}},
		{name: "bounded", data: asciiLog(), policy: PolicyBounded},
		{name: "legacy-capacity", data: asciiLog(), limits: func(l *Limits) { l.MaxValueSize = 30000 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStore(t)
			lim := L
			if tc.limits != nil {
				tc.limits(&lim)
			}
			pol := tc.policy
			if pol == "" {
				pol = PolicyLegacy
			}
			var out bytes.Buffer
			res, err := s.Retain(bytes.NewReader(tc.data), &out, RetainOptions{Run: "run", Call: "call-" + tc.name, Meta: tc.meta, Limits: lim, Policy: pol})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verbatim || out.Len() != 0 {
				t.Fatalf("verbatim output for a %d-byte value", len(tc.data))
			}
			checkStub(t, res.Stub, tc.data, lim.PreviewBytes)
			golden := filepath.Join("testdata", "stubs", tc.name+".golden")
			if *update {
				os.MkdirAll(filepath.Dir(golden), 0o755)
				if err := os.WriteFile(golden, []byte(res.Stub), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			if res.Stub != string(want) {
				t.Errorf("stub differs from %s:\n%s", golden, res.Stub)
			}
			if !res.Retained {
				return
			}
			// Replay from the store prints the very same stub.
			var rout bytes.Buffer
			stub, err := s.Replay(bytes.NewReader(tc.data), &rout, "run", "call-"+tc.name, lim.StubSettings(pol))
			if err != nil || stub != res.Stub || rout.Len() != 0 {
				t.Errorf("replay stub differs (err %v):\n%s", err, stub)
			}
		})
	}
}

// checkStub checks the stub's invariants against the value.
func checkStub(t *testing.T, stub string, data []byte, preview int64) {
	t.Helper()
	if !utf8.ValidString(stub) {
		t.Errorf("stub is not valid UTF-8")
	}
	lines := strings.SplitAfter(stub, "\n")
	if !strings.HasSuffix(stub, "\n") {
		t.Errorf("stub does not end in a newline")
	}
	_ = lines
	// Excerpt bytes (everything but the bracketed lines) stay within the
	// preview budget, give or take the newline added after a cut line.
	var excerpt int
	for _, l := range strings.SplitAfter(stub, "\n")[1:] {
		if strings.HasPrefix(l, "[… ") || strings.HasPrefix(l, "[line ") || strings.HasPrefix(l, "[read more:") {
			continue
		}
		excerpt += len(l)
	}
	if safetext.Clean(data) && int64(excerpt) > preview+2 {
		t.Errorf("excerpts hold %d bytes, budget %d", excerpt, preview)
	}
}

// TestStubTinyBudgets renders stubs under every small preview budget: none
// panics, 0 shows the header and read-more line only, no excerpt ends or
// starts inside a UTF-8 sequence of the value, and an excerpt shows whole
// lines, or a fragment of the first or last line with its marker
// (checkStubRule).
func TestStubTinyBudgets(t *testing.T) {
	var seq bytes.Buffer
	for i := 1; i <= 10000; i++ {
		fmt.Fprintf(&seq, "%d\n", i)
	}
	emoji := bytes.Repeat([]byte("😀 wide\n"), 4000)
	for _, v := range []struct {
		name string
		data []byte
	}{{"seq", seq.Bytes()}, {"emoji", emoji}} {
		for preview := int64(0); preview <= 80; preview++ {
			s := testStore(t)
			L := DefaultLimits()
			L.PreviewBytes = Setting(preview)
			call := fmt.Sprintf("%s-%d", v.name, preview)
			var out bytes.Buffer
			res, err := s.Retain(bytes.NewReader(v.data), &out, RetainOptions{Run: "r", Call: call, Limits: L})
			if err != nil || !res.Retained {
				t.Fatalf("%s: %v", call, err)
			}
			if strings.Contains(res.Stub, `\x`) {
				t.Errorf("%s: an excerpt splits a UTF-8 sequence:\n%s", call, res.Stub)
			}
			checkStubRule(t, res.Stub, v.data, res.Descriptor.Lines, preview, 400)
			st, err := s.Replay(bytes.NewReader(v.data), io.Discard, "r", call, L.StubSettings(PolicyLegacy))
			if err != nil || st != res.Stub {
				t.Errorf("%s: replay gives %q, %v; retain gave %q", call, st, err, res.Stub)
			}
		}
	}
	// A value that starts with a 4-byte character: budgets of 2 and 3 must
	// not show its first byte as \xf0.
	long := bytes.Repeat([]byte("😀"), 20000)
	for preview := int64(1); preview <= 200; preview++ {
		s := testStore(t)
		L := DefaultLimits()
		L.PreviewBytes = preview
		res, err := s.Retain(bytes.NewReader(long), io.Discard, RetainOptions{Run: "r", Call: "c", Limits: L})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(res.Stub, `\x`) || !utf8.ValidString(res.Stub) {
			t.Errorf("preview %d invents a fragment of a UTF-8 sequence:\n%s", preview, res.Stub)
		}
		checkStubRule(t, res.Stub, long, 1, preview, 400)
	}
}

// TestStubEscapes: no terminal escape of a value reaches a stub raw — C0
// controls (CR included), DEL, C1 controls and bidi overrides are shown
// escaped; tab, newline and other text stay as they are.
func TestStubEscapes(t *testing.T) {
	line := "\x1b[31mred\x1b[0m \u009b2J \u202egnp.exe\u202c \u2066iso\u2069 tab\there \x7f cr\r\n"
	data := []byte(strings.Repeat(line, 1000))
	s := testStore(t)
	res := retainAll(t, s, "r", "c", data)
	for _, raw := range []string{"\x1b", "\u009b", "\u202e", "\u202c", "\u2066", "\u2069", "\x7f", "\r"} {
		if strings.Contains(res.Stub, raw) {
			t.Errorf("stub holds %q raw:\n%s", raw, res.Stub)
		}
	}
	want := `\x1b[31mred\x1b[0m \u009b2J \u202egnp.exe\u202c \u2066iso\u2069 tab` + "\t" + `here \x7f cr\x0d` + "\n"
	if !strings.Contains(res.Stub, want) {
		t.Errorf("stub does not show the line escaped as %q:\n%s", want, res.Stub)
	}
}

// TestShellPeekCommand: the shell form quotes what needs quoting and
// nothing else.
func TestShellPeekCommand(t *testing.T) {
	root := "/" // an absolute path's start: C:\ on Windows, written C:/
	if runtime.GOOS == "windows" {
		root = `C:\`
	}
	slashed := filepath.ToSlash(root)
	for _, tc := range []struct{ dir, want string }{
		{root + "s/runs", "retval peek --runs-dir " + slashed + "s/runs --run r id --lines 1-4"},
		{root + "my runs", "retval peek --runs-dir '" + slashed + "my runs' --run r id --lines 1-4"},
		{root + "it's", `retval peek --runs-dir '` + slashed + `it'\''s' --run r id --lines 1-4`},
		{root + "$HOME;rm", "retval peek --runs-dir '" + slashed + "$HOME;rm' --run r id --lines 1-4"},
	} {
		if got := ShellPeekCommand(tc.dir, "r", "id", "--lines 1-4"); got != tc.want {
			t.Errorf("%q: %s, want %s", tc.dir, got, tc.want)
		}
	}
	if got := ShellPeekCommand(root+"s", "-r", "-id", "--lines 1-4"); got != "retval peek --runs-dir "+slashed+"s --run -r --lines 1-4 -- -id" {
		t.Errorf("dash ids: %s", got)
	}
	if runtime.GOOS == "windows" {
		// Backslashes would be escapes in Git Bash: a path is written
		// with forward slashes, and needs no quotes for them.
		if got := ShellPeekCommand(`C:\Users\me\runs`, "r", "id", "--lines 1-4"); got != "retval peek --runs-dir C:/Users/me/runs --run r id --lines 1-4" {
			t.Errorf("a Windows path: %s", got)
		}
	}
}

// TestReplayShellForm: replay rebuilds the shell form of the read-more
// line byte for byte, store path included.
func TestReplayShellForm(t *testing.T) {
	s := testStore(t)
	data := asciiLog()
	L := DefaultLimits()
	res, err := s.Retain(bytes.NewReader(data), io.Discard, RetainOptions{Run: "r", Call: "c", Limits: L, ReadMore: ReadMoreShell})
	if err != nil || !res.Retained {
		t.Fatal(res, err)
	}
	if !strings.Contains(res.Stub, "retval peek --runs-dir "+filepath.ToSlash(s.Dir)+" --run r c --lines ") {
		t.Fatalf("stub:\n%s", res.Stub)
	}
	st := L.StubSettings(PolicyLegacy)
	st.ReadMore = ReadMoreShell
	got, err := s.Replay(bytes.NewReader(data), io.Discard, "r", "c", st)
	if err != nil || got != res.Stub {
		t.Errorf("replay gives %q, %v; retain printed %q", got, err, res.Stub)
	}
}

// TestStubLongLines: a value whose first or last line is longer than its
// excerpt shows a fragment of that line, cut on a UTF-8 boundary and
// marked with what is not shown and the peek that reads it (exactly the
// rule of docs/design.md); a value that was not retained names no peek;
// the shell form names a whole command; replay prints every one of them
// byte for byte.
func TestStubLongLines(t *testing.T) {
	line := func(c string, n int) string { return strings.Repeat(c, n) }
	for _, tc := range []struct {
		name, data string
		preview    int64
		form       ReadMore
		limits     func(*Limits)
		want       string
	}{
		{name: "one-line", data: "é" + line("a", 98) + "é", preview: 20,
			want: "éaaaaaaaa\n[line 1 continues: 82 more bytes; peek c --bytes 10-92]\naaaaaaaaé\n[read more: peek c --lines 1-1 | --query TEXT]\n"},
		{name: "one-line-newline", data: line("a", 100) + "\n", preview: 20,
			want: "aaaaaaaaaa\n[line 1 continues: 81 more bytes; peek c --bytes 10-91]\naaaaaaaaa\n[read more: peek c --lines 1-1 | --query TEXT]\n"},
		{name: "long-first-and-last", data: line("a", 50) + "\n1\n2\n3\n" + line("z", 50), preview: 20,
			want: "aaaaaaaaaa\n[line 1 continues: 40 more bytes; peek c --bytes 10-50]\n[… 3 lines, 6 bytes not shown …]\n[line 5 ends: 40 bytes not shown, then its last 10 bytes; peek c --bytes 57-97]\nzzzzzzzzzz\n[read more: peek c --lines 1-5 | --query TEXT]\n"},
		{name: "long-last", data: "1\n2\n" + line("z", 50) + "\n", preview: 20,
			want: "1\n2\n[line 3 ends: 35 bytes not shown, then its last 16 bytes; peek c --bytes 4-39]\nzzzzzzzzzzzzzzz\n[read more: peek c --lines 3-3 | --query TEXT]\n"},
		{name: "shell", data: line("a", 100), preview: 20, form: ReadMoreShell,
			want: "aaaaaaaaaa\n[line 1 continues: 80 more bytes; retval peek --runs-dir $RUNS --run r c --bytes 10-90]\naaaaaaaaaa\nretval peek --runs-dir $RUNS --run r c --lines 1-1  # read more, or: --query TEXT instead of --lines\n"},
		{name: "not-retained", data: line("a", 100), preview: 20, limits: func(l *Limits) { l.MaxValueSize = 50 },
			want: "aaaaaaaaaa\n[line 1 continues: 80 more bytes]\naaaaaaaaaa\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testStore(t)
			L := DefaultLimits()
			L.Threshold, L.PreviewBytes = Unlimited, tc.preview
			if tc.limits != nil {
				tc.limits(&L)
			}
			res, err := s.Retain(strings.NewReader(tc.data), io.Discard, RetainOptions{Run: "r", Call: "c", Limits: L, ReadMore: tc.form})
			if err != nil {
				t.Fatal(err)
			}
			_, body, _ := strings.Cut(res.Stub, "\n")
			want := strings.ReplaceAll(tc.want, "$RUNS", filepath.ToSlash(s.Dir))
			if body != want {
				t.Fatalf("stub body\n%s\nwant\n%s", body, want)
			}
			if !res.Retained {
				return
			}
			st := L.StubSettings(PolicyLegacy)
			st.ReadMore = tc.form
			got, err := s.Replay(strings.NewReader(tc.data), io.Discard, "r", "c", st)
			if err != nil || got != res.Stub {
				t.Errorf("replay gives %q, %v; retain printed %q", got, err, res.Stub)
			}
		})
	}
}
