package retain

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// minified is a one-line JSON document whose head excerpt shows nothing.
func minified() string {
	var b strings.Builder
	b.WriteString(`{"name":"sample","version":"1.0.0","meta":{"a":1,"b":[1,2,3],"c":"` + strings.Repeat("x", 60) + `","d":{}},"items":[`)
	for i := range 3000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"tags":["a","b"]}`, i)
	}
	b.WriteString(`],"https://x/y":null,"ok":true,"empty":[]}`)
	return b.String()
}

func retainStub(t *testing.T, s *Store, call, in string, o RetainOptions) string {
	t.Helper()
	o.Run, o.Call = "r", call
	res, err := s.Retain(strings.NewReader(in), io.Discard, o)
	if err != nil || !res.Retained {
		t.Fatalf("retain %s: %v %+v", call, err, res)
	}
	// replay rebuilds it byte for byte.
	var out bytes.Buffer
	stub, err := s.Replay(strings.NewReader(in), &out, "r", call, StubSettings{PreviewBytes: o.Limits.PreviewBytes, PeekLines: o.Limits.PeekLines, Policy: o.Policy, ReadMore: o.ReadMore})
	if err != nil || stub != res.Stub {
		t.Fatalf("replay of %s: %v\n%s\nretain printed:\n%s", call, err, stub, res.Stub)
	}
	return res.Stub
}

func TestJSONStubOutline(t *testing.T) {
	doc := minified()
	want := `[JSON object, 7 members, 86076 bytes; its outline:]
/name  string  8 bytes  "sample"
/version  string  7 bytes  "1.0.0"
/meta  object  4 members  93 bytes
  /meta/a  number  1 byte  1
  /meta/b  array  3 elements  7 bytes
  /meta/c  string  62 bytes  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…
  [… 1 more member]
/items  array  3000 elements  85891 bytes
  /items/0  object  2 members  25 bytes
  /items/1  object  2 members  25 bytes
  /items/2  object  2 members  25 bytes
  [… 2997 more elements]
/https:~1~1x~1y  null  4 bytes  null
/ok  boolean  4 bytes  true
/empty  array  0 elements  2 bytes
[read more: peek j --outline /items | --lines 1-1 | --query TEXT]
`
	for _, comp := range []string{"none", "zstd"} {
		s := Open(t.TempDir())
		stub := retainStub(t, s, "j", doc, RetainOptions{Compress: comp})
		if _, body, _ := strings.Cut(stub, "\n"); body != want {
			t.Errorf("%s stub:\n%s\nwant:\n%s", comp, body, want)
		}
		shell := retainStub(t, s, "k", doc, RetainOptions{Compress: comp, ReadMore: ReadMoreShell})
		if !strings.HasSuffix(shell, " --run r k --outline /items  # read more: any pointer shown after --outline lists its members; or: --lines 1-1 or --query TEXT instead of --outline\n") {
			t.Errorf("%s shell stub:\n%s", comp, shell)
		}
	}
}

// TestJSONStubBudget: the outline fits the preview budget whatever it is;
// a budget too small for any member still shows the header and how many
// members there are.
func TestJSONStubBudget(t *testing.T) {
	doc := minified()
	s := Open(t.TempDir())
	for _, budget := range []int64{60, 100, 200, 333, 512, 1024, 4096} {
		stub := retainStub(t, s, fmt.Sprintf("b%d", budget), doc, RetainOptions{Limits: Limits{PreviewBytes: budget}})
		lines := strings.Split(stub, "\n")
		// The outline, or (for a budget it cannot fit) the excerpts of
		// the plain stub, without the markers between them.
		var body string
		for _, l := range lines[1 : len(lines)-2] {
			if !strings.HasPrefix(l, "[line ") && !strings.HasPrefix(l, "[… ") {
				body += l + "\n"
			}
		}
		if int64(len(body)) > budget+2 && budget >= 60 {
			t.Errorf("budget %d: outline of %d bytes:\n%s", budget, len(body), body)
		}
		if budget >= 100 && !strings.HasPrefix(lines[1], "[JSON object, 7 members,") {
			t.Errorf("budget %d: %s", budget, stub)
		}
	}
}

// TestJSONStubPlain: a document whose head shows its shape keeps the
// head and tail excerpts, as does a value that is not one JSON document,
// a small one, a bounded-policy one and a preview of 0.
func TestJSONStubPlain(t *testing.T) {
	var pretty strings.Builder
	pretty.WriteString("{\n")
	for i := range 2000 {
		fmt.Fprintf(&pretty, "  \"k%d\": %d,\n", i, i)
	}
	pretty.WriteString("  \"end\": true\n}\n")
	s := Open(t.TempDir())
	for name, tc := range map[string]struct {
		in string
		o  RetainOptions
	}{
		"pretty":   {pretty.String(), RetainOptions{}},
		"notjson":  {minified() + "x", RetainOptions{}},
		"scalar":   {`"` + strings.Repeat("s", 30000) + `"`, RetainOptions{}},
		"bounded":  {minified(), RetainOptions{Policy: PolicyBounded}},
		"preview0": {minified(), RetainOptions{Limits: Limits{PreviewBytes: Unlimited}}},
	} {
		stub := retainStub(t, s, name, tc.in, tc.o)
		if strings.Contains(stub, "its outline") || strings.Contains(stub, "--outline") {
			t.Errorf("%s: outline stub:\n%s", name, stub)
		}
	}
}

// TestJSONStubNested: a pretty-printed document nested deeper than its
// head excerpt reaches is outlined too.
func TestJSONStubNested(t *testing.T) {
	var b strings.Builder
	b.WriteString("{\n")
	for d := 1; d <= 40; d++ {
		fmt.Fprintf(&b, "%s\"level%d\": {\n", strings.Repeat("  ", d), d)
	}
	fmt.Fprintf(&b, "%s\"data\": [%s1]\n", strings.Repeat("  ", 41), strings.Repeat("1, ", 10000))
	for d := 40; d >= 1; d-- {
		fmt.Fprintf(&b, "%s}\n", strings.Repeat("  ", d))
	}
	b.WriteString(", \"second\": 2}\n")
	doc := strings.Replace(b.String(), "  }\n, \"second\"", "  },\n  \"second\"", 1)
	s := Open(t.TempDir())
	stub := retainStub(t, s, "n", doc, RetainOptions{})
	if !strings.Contains(stub, "[JSON object, 2 members,") || !strings.Contains(stub, "\n/level1  object  1 member  ") ||
		!strings.Contains(stub, "\n  /level1/level2  object  1 member  ") || !strings.Contains(stub, "\n/second  number  1 byte  2\n") ||
		!strings.HasSuffix(stub, "[read more: peek n --outline /level1 | --lines 1-83 | --query TEXT]\n") {
		t.Fatalf("stub:\n%s", stub)
	}
}

func TestNDJSONStub(t *testing.T) {
	in := strings.Repeat(`{"Action":"output","Output":"ok\n"}`+"\n", 1000)
	s := Open(t.TempDir())
	stub := retainStub(t, s, "nd", in, RetainOptions{})
	if !strings.HasSuffix(stub, " | --query TEXT | NDJSON, a JSON document a line: --lines N --outline]\n") {
		t.Fatalf("stub:\n%s", stub)
	}
	shell := retainStub(t, s, "nd2", in, RetainOptions{ReadMore: ReadMoreShell})
	if !strings.HasSuffix(shell, "  # read more, or: --query TEXT instead of --lines; NDJSON (a JSON document a line): --lines N --outline '' lists line N's members\n") {
		t.Fatalf("shell stub:\n%s", shell)
	}
}
