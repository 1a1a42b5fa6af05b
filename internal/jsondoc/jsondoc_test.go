package jsondoc

import (
	"encoding/json"
	"math/rand"
	"strings"
	"testing"
)

// Any document in the form JSON.stringify(v, null, 2) writes prints back
// byte for byte.
func TestDocRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	var gen func(depth int) any
	gen = func(depth int) any {
		switch k := r.Intn(7); {
		case k == 0 && depth < 4:
			m := map[string]any{}
			for i := r.Intn(4); i > 0; i-- {
				m[string(rune('a'+r.Intn(26)))+"\u00e9\"\\\n<"] = gen(depth + 1)
			}
			return m
		case k == 1 && depth < 4:
			var a []any
			for i := r.Intn(4); i > 0; i-- {
				a = append(a, gen(depth+1))
			}
			if a == nil {
				a = []any{}
			}
			return a
		case k == 2:
			return r.Float64() * 1e6
		case k == 3:
			return nil
		case k == 4:
			return r.Intn(2) == 0
		}
		return "s\t\u2028\x01" + string(rune(r.Intn(0x3000)))
	}
	for i := 0; i < 500; i++ {
		b, _ := json.MarshalIndent(map[string]any{"v": gen(0)}, "", "  ")
		n, err := Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		var sb strings.Builder
		n.Print(&sb, Indent(b), 0)
		if sb.String() != string(b) {
			t.Fatalf("round trip:\n%s\nprinted as\n%s", b, sb.String())
		}
	}
}

// Every parsed node's Start and End delimit its own text, so an edit can
// splice over one value and keep every other byte.
func TestSpans(t *testing.T) {
	src := " {\"a\" : [1, \"x\\\"y\" ,{}], \"b\":{\"c\":true},\"d\":-1.5e3 }\n"
	n, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var walk func(n *Node)
	walk = func(n *Node) {
		got := src[n.Start:n.End]
		var sb strings.Builder
		c := *n
		c.Print(&sb, "", 0)
		var x, y any
		if err := json.Unmarshal([]byte(got), &x); err != nil {
			t.Fatalf("span %d:%d = %q is not a value: %v", n.Start, n.End, got, err)
		}
		json.Unmarshal([]byte(sb.String()), &y)
		if b1, _ := json.Marshal(x); string(b1) != func() string { b2, _ := json.Marshal(y); return string(b2) }() {
			t.Errorf("span %q does not hold the node %s", got, sb.String())
		}
		for _, v := range n.Vals {
			walk(v)
		}
	}
	walk(n)
	if a := n.Get("a"); src[a.Start:a.End] != `[1, "x\"y" ,{}]` {
		t.Errorf("a spans %q", src[a.Start:a.End])
	}
	if d := n.Get("d"); src[d.Start:d.End] != `-1.5e3` {
		t.Errorf("d spans %q", src[d.Start:d.End])
	}
}
