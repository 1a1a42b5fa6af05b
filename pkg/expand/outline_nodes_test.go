package expand

import (
	"fmt"
	"strings"
	"testing"
)

// OutlineChildren lists a container's children as data; every pointer it
// gives selects that child, whose lexeme starts at the node's Start and
// is its Size long, and a page from a later position with a small head
// leaves a gap before the tail.
func TestOutlineChildren(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"a": {"b": [1, {"c": "deep"}]}, "list": [`)
	for i := range 50 {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `"item %d"`, i)
	}
	b.WriteString(`], "k~/": true}`)
	doc := b.String()
	rs := newStore(t, map[string]string{"c": doc})
	v, err := rs.Store.OpenValue("r", "c")
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	root, err := OutlineChildren(v, mustRef(t, `{"$ref": "c", "outline": ""}`), 10)
	if err != nil {
		t.Fatal(err)
	}
	if root.Kind != "object" || root.Count != 3 || len(root.Head) != 3 || len(root.Tail) != 0 || root.Gap != 0 {
		t.Fatalf("root: %+v", root)
	}
	if got := []string{root.Head[0].Pointer, root.Head[1].Pointer, root.Head[2].Pointer}; got[0] != "/a" || got[1] != "/list" || got[2] != "/k~0~1" {
		t.Fatalf("pointers %q", got)
	}
	for _, n := range root.Head {
		sel, err := rs.Open(mustRef(t, fmt.Sprintf(`{"$ref": "c", "pointer": %q}`, n.Pointer)))
		if err != nil {
			t.Fatalf("%s: %v", n.Pointer, err)
		}
		if sel.Start != n.Start || sel.End-sel.Start != n.Size {
			t.Errorf("%s: node at %d+%d, the pointer selects %d-%d", n.Pointer, n.Start, n.Size, sel.Start, sel.End)
		}
		sel.Close()
	}
	list, err := OutlineChildren(v, mustRef(t, `{"$ref": "c", "outline": "/list", "after": 19}`), 5)
	if err != nil {
		t.Fatal(err)
	}
	if list.Count != 50 || len(list.Head) != 5 || list.Head[0].Pos != 20 || list.Head[0].Pointer != "/list/20" ||
		len(list.Tail) != 3 || list.Tail[0].Pos != 47 || list.Gap != 22 || list.Head[0].Preview != `"item 20"` {
		t.Fatalf("list page: %+v", list)
	}
	deep, err := OutlineChildren(v, mustRef(t, `{"$ref": "c", "outline": "/a/b/1"}`), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(deep.Head) != 1 || deep.Head[0].Name != "c" || deep.Head[0].Preview != `"deep"` {
		t.Fatalf("/a/b/1: %+v", deep)
	}
}
