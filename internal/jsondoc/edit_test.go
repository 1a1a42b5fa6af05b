package jsondoc

import (
	"errors"
	"strings"
	"testing"
)

// entry is a hook entry as the installer adds one.
func entry() *Node {
	h := &Node{Kind: '{'}
	h.Set("type", String("command"))
	h.Set("command", String("retval hook claude-code"))
	return &Node{Kind: '[', Vals: []*Node{h}}
}

// Inserting into a document writes in its own style; removing what was
// inserted gives back every byte: compact, CRLF, tabs, empty containers.
func TestDocInsertRemove(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"compact", `{"model":"opus","env":{"A":"1"}}`,
			`{"model":"opus","env":{"A":"1"},"hooks":[{"type":"command","command":"retval hook claude-code"}]}`},
		{"one line with spaces", `{"model": "opus", "env": {"A": "1"}}` + "\n",
			`{"model": "opus", "env": {"A": "1"}, "hooks": [{"type": "command", "command": "retval hook claude-code"}]}` + "\n"},
		{"crlf", "{\r\n  \"model\": \"opus\"\r\n}\r\n",
			"{\r\n  \"model\": \"opus\",\r\n  \"hooks\": [\r\n    {\r\n      \"type\": \"command\",\r\n      \"command\": \"retval hook claude-code\"\r\n    }\r\n  ]\r\n}\r\n"},
		{"tabs", "{\n\t\"model\": \"opus\"\n}",
			"{\n\t\"model\": \"opus\",\n\t\"hooks\": [\n\t\t{\n\t\t\t\"type\": \"command\",\n\t\t\t\"command\": \"retval hook claude-code\"\n\t\t}\n\t]\n}"},
		{"empty", "{}\n",
			"{\n  \"hooks\": [\n    {\n      \"type\": \"command\",\n      \"command\": \"retval hook claude-code\"\n    }\n  ]\n}\n"},
		{"empty compact spaced", "{ }",
			"{\n  \"hooks\": [\n    {\n      \"type\": \"command\",\n      \"command\": \"retval hook claude-code\"\n    }\n  ]\n}"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := NewDoc([]byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Insert(d.Root, len(d.Root.Vals), "hooks", entry()); err != nil {
				t.Fatal(err)
			}
			if got := string(d.Bytes()); got != c.want {
				t.Fatalf("inserted:\n%q\nwant\n%q", got, c.want)
			}
			if err := d.Remove(d.Root, len(d.Root.Vals)-1); err != nil {
				t.Fatal(err)
			}
			want := c.src
			if c.name == "empty compact spaced" {
				want = "{}" // an emptied list on lines of its own reads as {}
			}
			if got := string(d.Bytes()); got != want {
				t.Errorf("removed:\n%q\nwant\n%q", got, want)
			}
		})
	}
}

// Elements go in at the list's own indent and separator: into an array
// written one element per line, into one written on one line, before the
// first element.
func TestDocArrays(t *testing.T) {
	src := "{\n    \"allow\": [\n        \"a\"\n    ],\n    \"deny\": [\"x\" , \"y\"],\n    \"ask\": []\n}\n"
	d, err := NewDoc([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	steps := []func() error{
		func() error { return d.Insert(d.Root.Get("allow"), 1, "", String("b")) },
		func() error { return d.Insert(d.Root.Get("deny"), 2, "", String("z")) },
		func() error { return d.Insert(d.Root.Get("deny"), 0, "", String("w")) },
		func() error { return d.Insert(d.Root.Get("ask"), 0, "", String("q")) },
	}
	for _, s := range steps {
		if err := s(); err != nil {
			t.Fatal(err)
		}
	}
	want := "{\n    \"allow\": [\n        \"a\",\n        \"b\"\n    ],\n    \"deny\": [\"w\" , \"x\" , \"y\" , \"z\"],\n    \"ask\": [\n        \"q\"\n    ]\n}\n"
	if got := string(d.Bytes()); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	for _, r := range []struct {
		key string
		i   int
	}{{"ask", 0}, {"deny", 0}, {"deny", 2}, {"allow", 1}} {
		if err := d.Remove(d.Root.Get(r.key), r.i); err != nil {
			t.Fatal(err)
		}
	}
	if got := string(d.Bytes()); got != src {
		t.Errorf("removed:\n%s\nwant\n%s", got, src)
	}
}

func TestDocReplace(t *testing.T) {
	d, _ := NewDoc([]byte(`{"a": {"command": "old"}}`))
	if err := d.Replace(d.Root.Get("a").Get("command"), String("new \"one\"")); err != nil {
		t.Fatal(err)
	}
	if got := string(d.Bytes()); got != `{"a": {"command": "new \"one\""}}` {
		t.Errorf("got %s", got)
	}
}

// Parse errors are typed, and say where.
func TestParseErrors(t *testing.T) {
	_, err := Parse([]byte("{\n  \"a\": 1,\n}"))
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 3 || !strings.HasPrefix(err.Error(), "not valid JSON (line 3, column 1): ") {
		t.Errorf("%v", err)
	}
	_, err = Parse([]byte(`{"a": 1, "a": 2}`))
	var de *DuplicateKeyError
	if !errors.As(err, &de) || de.Key != "a" {
		t.Errorf("%v", err)
	}
}

// Any list of any document takes an element at any place and gives it
// back: the text after Remove is the text before Insert. (An empty list
// with white space inside is the one exception, emptied to [] or {}.)
func FuzzDocRoundTrip(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2],"b":{}}`, "{\r\n  \"a\": [\r\n    1\r\n  ]\r\n}", "[ 1 ,2 ]", `{"a": {"b": [[], {"c": null}]}}`} {
		f.Add(s, uint8(0), uint8(0))
	}
	f.Fuzz(func(t *testing.T, src string, which, at uint8) {
		d, err := NewDoc([]byte(src))
		if err != nil {
			return
		}
		var lists []*Node
		var walk func(n *Node)
		walk = func(n *Node) {
			if n.Kind != 0 {
				lists = append(lists, n)
			}
			for _, v := range n.Vals {
				walk(v)
			}
		}
		walk(d.Root)
		if len(lists) == 0 {
			return
		}
		l := lists[int(which)%len(lists)]
		if len(l.Vals) == 0 && strings.TrimSpace(src[l.Start+1:l.End-1]) == "" && l.End-l.Start > 2 {
			return
		}
		i := int(at) % (len(l.Vals) + 1)
		key := ""
		if l.Kind == '{' {
			key = "new\u00e9"
			if l.Get(key) != nil {
				return
			}
		}
		path := pathTo(d.Root, l)
		if err := d.Insert(l, i, key, entry()); err != nil {
			t.Fatal(err)
		}
		if err := d.Remove(follow(d.Root, path), i); err != nil {
			t.Fatal(err)
		}
		if got := string(d.Bytes()); got != src {
			t.Errorf("insert at %d then remove:\n%q\nbecame\n%q", i, src, got)
		}
	})
}

// pathTo is the indexes leading from root to n.
func pathTo(root, n *Node) []int {
	if root == n {
		return []int{}
	}
	for i, v := range root.Vals {
		if p := pathTo(v, n); p != nil {
			return append([]int{i}, p...)
		}
	}
	return nil
}

func follow(root *Node, path []int) *Node {
	for _, i := range path {
		root = root.Vals[i]
	}
	return root
}
