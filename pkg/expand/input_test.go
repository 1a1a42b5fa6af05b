package expand

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/retval/retval/pkg/retain"
)

// jsonString is s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// A tool call's string argument that begins with "$expand:" stands for the
// expanded text; everything else is copied byte for byte.
func TestExpandInput(t *testing.T) {
	x := newExpander(t, expandValues)
	ref := func(node string) string { return jsonString(Prefix + node) }
	for _, tc := range []struct {
		name, in, want string
		objects        bool
		fields         []Expansion
	}{
		{"untouched", `{"command": "ls -l", "n": 1.50, "s": "not $expand: at the start"}`,
			`{"command": "ls -l", "n": 1.50, "s": "not $expand: at the start"}`, false, nil},
		{"ref", `{"file_path": "/x", "content": ` + ref(`{"$ref": "crlf", "lines": [2, 3]}`) + `}`,
			`{"file_path": "/x", "content": "two\r\nthree\r\n"}`, false,
			[]Expansion{{Path: "/content", Bytes: 12, SHA256: sum("two\r\nthree\r\n")}}},
		{"concat", `{"content": ` + ref(`{"$concat": ["new\n", {"$ref": "nl", "lines": [2, 2]}]}`) + `}`,
			`{"content": "new\nb\n"}`, false,
			[]Expansion{{Path: "/content", Bytes: 6, SHA256: sum("new\nb\n")}}},
		{"literal escapes the prefix", `{"a": ` + ref(`{"$literal": "$expand:{\"$ref\": \"nl\"}"}`) + `}`,
			`{"a": "$expand:{\"$ref\": \"nl\"}"}`, false,
			[]Expansion{{Path: "/a", Bytes: 22}}},
		{"escaped prefix", `{"a": "\u0024expand:{\"$ref\": \"nl\"}"}`, `{"a": "a\nb\n"}`, false,
			[]Expansion{{Path: "/a", Bytes: 4, SHA256: sum("a\nb\n")}}},
		{"nested and in arrays", `{"edits": [{"new_string": ` + ref(`{"$ref": "utf"}`) + `}]}`,
			`{"edits": [{"new_string": "aé😀z"}]}`, false,
			[]Expansion{{Path: "/edits/0/new_string", Bytes: 8, SHA256: sum("aé😀z")}}},
		{"bare object off: data", `{"schema": {"$ref": "nl"}}`, `{"schema": {"$ref": "nl"}}`, false, nil},
		{"bare object on", `{"text": {"$ref": "nl"}}`, `{"text": "a\nb\n"}`, true,
			[]Expansion{{Path: "/text", Bytes: 4, SHA256: sum("a\nb\n")}}},
		{"json schema ref stays", `{"schema": {"$ref": "#/definitions/x"}, "t": {"$ref": "nl"}}`,
			`{"schema": {"$ref": "#/definitions/x"}, "t": "a\nb\n"}`, true,
			[]Expansion{{Path: "/t", Bytes: 4, SHA256: sum("a\nb\n")}}},
		{"prefix inside a bare node is its data", `{"t": {"$literal": "$expand:{}"}}`, `{"t": {"$literal": "$expand:{}"}}`, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := x.ExpandInput([]byte(tc.in), InputOptions{Objects: tc.objects})
			if err != nil {
				t.Fatal(err)
			}
			if string(in.Doc) != tc.want {
				t.Fatalf("got  %s\nwant %s", in.Doc, tc.want)
			}
			if len(in.Fields) != len(tc.fields) {
				t.Fatalf("fields %+v, want %+v", in.Fields, tc.fields)
			}
			var expanded int64
			for i, f := range in.Fields {
				if f != tc.fields[i] {
					t.Errorf("field %d: %+v, want %+v", i, f, tc.fields[i])
				}
				expanded += f.Bytes
			}
			if in.Expanded != expanded {
				t.Errorf("Expanded %d, want %d", in.Expanded, expanded)
			}
			if len(tc.fields) == 0 && (in.Written != 0 || string(in.Doc) != tc.in) {
				t.Errorf("untouched input: Written %d", in.Written)
			}
		})
	}
}

// A call whose references fail is refused whole, every failure named
// with its path in the arguments.
func TestExpandInputRefused(t *testing.T) {
	x := newExpander(t, expandValues)
	in := `{"a": ` + jsonString(Prefix+`{"$concat": ["x", {"$ref": "nl", "lines": [9, 9]}]}`) +
		`, "b": ` + jsonString(Prefix+`{"$ref": "nope"}`) +
		`, "c": ` + jsonString(Prefix+`not json`) +
		`, "d": ` + jsonString(Prefix+`{"$ref": "json", "pointer": "", "as": "value"}`) +
		`, "e": ` + jsonString(Prefix+`{"$literal": 5}`) +
		`, "f": ` + jsonString(Prefix+`{"x": 1}`) + `}`
	_, err := x.ExpandInput([]byte(in), InputOptions{})
	if retain.CodeOf(err) != retain.CodeExpandRefused {
		t.Fatalf("%v, want expand_refused", err)
	}
	var got []string
	for _, f := range refusal(t, err) {
		got = append(got, f.Path+" "+string(f.Code))
	}
	want := []string{"/a/$concat/1 invalid_range", "/b unknown_reference", "/c bad_reference", "/d bad_reference", "/e bad_reference", "/f bad_reference"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("failures:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Not JSON: a usage error, for the integration to pass the call on.
	if _, err := x.ExpandInput([]byte(`{"a": `), InputOptions{}); retain.CodeOf(err) != retain.CodeUsage {
		t.Errorf("not JSON: %v", err)
	}
}

// The summary names each expanded field's bytes and digest; Unexpanded
// finds the reference forms a tool received as written.
func TestExpandInputSummaryAndUnexpanded(t *testing.T) {
	x := newExpander(t, expandValues)
	src := `{"content": ` + jsonString(Prefix+`{"$ref": "nl"}`) + `, "note": "x"}`
	in, err := x.ExpandInput([]byte(src), InputOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "[retval expanded /content: 4 bytes, sha256:" + sum("a\nb\n") + "]"; in.Summary() != want {
		t.Errorf("summary %q, want %q", in.Summary(), want)
	}
	if in.Written != int64(len(jsonString(Prefix+`{"$ref": "nl"}`))) || in.Expanded != 4 {
		t.Errorf("written %d, expanded %d", in.Written, in.Expanded)
	}
	if got := Unexpanded([]byte(src)); len(got) != 1 || got[0] != "/content" {
		t.Errorf("Unexpanded %q", got)
	}
	if got := Unexpanded(in.Doc); got != nil {
		t.Errorf("Unexpanded of the expanded call %q", got)
	}
}

// An expanded call is recorded in the read log, and stats reports the
// output it saved.
func TestExpandInputLogged(t *testing.T) {
	x := newExpander(t, expandValues)
	src := `{"content": ` + jsonString(Prefix+`{"$concat": ["x", {"$ref": "crlf"}]}`) + `}`
	in, err := x.ExpandInput([]byte(src), InputOptions{})
	if err != nil {
		t.Fatal(err)
	}
	x.LogInput("hook claude-code", "Write", in)
	var got []retain.Read
	if _, err := x.Store.ScanReads(retain.ID(x.Run), func(r *retain.Read) {
		if r.Op == retain.OpReference {
			got = append(got, *r)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Tool != "Write" || got[0].Via != "hook claude-code" || got[0].Bytes != in.Written || got[0].Size != in.Expanded || in.Expanded != int64(1+len(crlf)) {
		t.Fatalf("records %+v, input %+v", got, in)
	}
}
