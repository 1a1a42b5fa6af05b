package retain

import (
	"io"
	"strings"
	"testing"
)

// TestNDJSONDescriptor: "ndjson" is true exactly when every non-empty line
// is one valid JSON document and there are at least two, whatever the
// chunk boundaries.
func TestNDJSONDescriptor(t *testing.T) {
	for _, tc := range []struct {
		in       string
		json, nd bool
	}{
		{"{\"a\":1}\n{\"b\":2}\n", false, true},
		{"{\"a\":1}\n{\"b\":2}", false, true},
		{"\n\n{\"a\":1}\r\n\n  [1, 2]  \n[]\n", false, true},
		{"{\"a\":1}\n3\n", false, false},
		{"1\n2\n3\n", false, false},
		{"\"s\"\n{}\n", false, false},
		{"{\"a\":1}\n", true, false},
		{"{\"a\":1}", true, false},
		{"{\n  \"a\": 1\n}\n", true, false},
		{"{\"a\":1}\n{\"b\":\n2}\n", false, false},
		{"{\"a\":1}\n{\"b\":2}\nnot json\n", false, false},
		{"{\"a\":1}\n{\"b\":2}\n{\"c\":\n", false, false},
		{"1 2\n3\n", false, false},
		{"plain text\nmore\n", false, false},
		{"{\"a\":\"\xff\"}\n{}\n", false, false},
		{"\n\n", false, false},
	} {
		for _, chunk := range []int{1, 2, 3, 7, 1 << 20} {
			st := newStats(0, false)
			for i := 0; i < len(tc.in); i += chunk {
				st.add([]byte(tc.in[i:min(i+chunk, len(tc.in))]))
			}
			var d Descriptor
			st.descriptor(&d)
			if d.JSON != tc.json || d.NDJSON != tc.nd {
				t.Errorf("%q (chunk %d): json %v ndjson %v; want %v %v", tc.in, chunk, d.JSON, d.NDJSON, tc.json, tc.nd)
			}
		}
	}
}

// TestNDJSONRetained: the descriptor a retain commits says "ndjson": true.
func TestNDJSONRetained(t *testing.T) {
	s := Open(t.TempDir())
	in := strings.Repeat("{\"Action\":\"pass\",\"Test\":\"TestX\"}\n", 1000)
	res, err := s.Retain(strings.NewReader(in), io.Discard, RetainOptions{Run: "r", Call: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Descriptor.NDJSON || res.Descriptor.JSON {
		t.Fatalf("descriptor: json %v ndjson %v", res.Descriptor.JSON, res.Descriptor.NDJSON)
	}
	v, err := s.OpenValue("r", "c")
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if !v.Desc.NDJSON {
		t.Fatal("stored descriptor lost ndjson")
	}
}
