package jsonvalid

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestValidTable(t *testing.T) {
	for _, s := range []string{
		`0`, `-0`, `1.5e+10`, ` "a\u00e9\n" `, `{}`, `[]`, `{"a":[1,{"b":null}],"c":true}`,
		`1.00000000000000000001`, `123456789012345678901234567890`, "[\n1 ,\t2]\r\n",
		`""`, `{"":""}`, `[[[[[]]]]]`,
		`01`, `1.`, `.5`, `-`, `1e`, `[1,]`, `{"a":1,}`, `{"a"}`, `{1:2}`, `"\x"`, `"\u12g4"`,
		`tru`, `nul`, `[`, `]`, `{`, ``, ` `, `1 2`, `{}{}`, "\"a\tb\"", `[1]]`, `{"a":1]`,
	} {
		want := json.Valid([]byte(s))
		if got := Valid([]byte(s)); got != want {
			t.Errorf("Valid(%q) = %v, want %v", s, got, want)
		}
		// Byte-at-a-time feeding must agree.
		var v Validator
		for i := 0; i < len(s); i++ {
			v.Write([]byte{s[i]})
		}
		if got := v.Valid(); got != want {
			t.Errorf("bytewise Valid(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestDeepNesting(t *testing.T) {
	s := strings.Repeat("[", 200000) + strings.Repeat("]", 200000)
	if !Valid([]byte(s)) {
		t.Fatal("200000-deep arrays not valid")
	}
	if Valid([]byte(strings.Repeat("[", 200000) + strings.Repeat("]", 199999))) {
		t.Fatal("unbalanced accepted")
	}
}

func FuzzValid(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":"c"}]}`, `-0.5e-3`, `"\u0041"`, `[true,false,null]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want := json.Valid(b)
		if got := Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, want %v", b, got, want)
		}
		if len(b) > 1 {
			var v Validator
			v.Write(b[:len(b)/2])
			v.Write(b[len(b)/2:])
			if v.Valid() != want {
				t.Fatalf("split Valid(%q) != %v", b, want)
			}
		}
	})
}
