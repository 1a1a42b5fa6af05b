package tomldoc

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// The Go values each kind of TOML value decodes to: pkg/config turns the
// scalars to text and refuses the rest, pkg/mcpwrap compares two decodes
// of a Codex config with reflect.DeepEqual.
func TestDecodeValues(t *testing.T) {
	const doc = `s = "x"
lit = 'C:\x'
i = 0x1F
neg = -7
f = 1.5
inf = inf
b = true
odt = 1979-05-27T07:32:00-07:00
ldt = 1979-05-27T07:32:00
ld = 1979-05-27
lt = 07:32:00
arr = [1, "a"]
inline = { k = 1 }
[tab]
sub.k = 2
[[aot]]
n = 1
`
	var m map[string]any
	if err := Decode([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"s":      "x",
		"lit":    `C:\x`,
		"i":      int64(31),
		"neg":    int64(-7),
		"f":      1.5,
		"inf":    m["inf"], // +Inf, checked below
		"b":      true,
		"odt":    time.Date(1979, 5, 27, 7, 32, 0, 0, time.FixedZone("", -7*3600)),
		"ldt":    toml.LocalDateTime{LocalDate: toml.LocalDate{Year: 1979, Month: 5, Day: 27}, LocalTime: toml.LocalTime{Hour: 7, Minute: 32}},
		"ld":     toml.LocalDate{Year: 1979, Month: 5, Day: 27},
		"lt":     toml.LocalTime{Hour: 7, Minute: 32},
		"arr":    []any{int64(1), "a"},
		"inline": map[string]any{"k": int64(1)},
		"tab":    map[string]any{"sub": map[string]any{"k": int64(2)}},
		"aot":    []any{map[string]any{"n": int64(1)}},
	}
	if f, ok := m["inf"].(float64); !ok || f <= 1e308 {
		t.Errorf("inf = %#v, want +Inf as a float64", m["inf"])
	}
	odt, _ := m["odt"].(time.Time)
	if !odt.Equal(want["odt"].(time.Time)) {
		t.Errorf("odt = %v, want %v", m["odt"], want["odt"])
	}
	m["odt"], want["odt"] = nil, nil
	if !reflect.DeepEqual(m, want) {
		t.Errorf("decoded\n%#v\nwant\n%#v", m, want)
	}
	// Two decodes of one document are DeepEqual, offset date-times
	// included: mcpwrap compares the file before and after an edit so.
	var first, again map[string]any
	if err := Decode([]byte(doc), &first); err != nil {
		t.Fatal(err)
	}
	if err := Decode([]byte(doc), &again); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(first, again) {
		t.Error("two decodes of one document differ")
	}
}

// A document that does not decode is one line naming the line and
// column, with what the document holds escaped.
func TestDecodeError(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a = 1\nb = @\n", "toml: line 2, column 5: unexpected character U+0040 '@' at start of value"},
		{"a = 1\r\n\r\nthreshold = 1KiB\r\n", "toml: line 3, column 14: strings must be quoted"},
		{"[mcp_servers.a\ncommand = 1\n", "toml: line 1, column 15: expected ']' to close table name"},
		{"\"a\\nb\\u001b[31m\" = 1\n\"a\\nb\\u001b[31m\" = 2\n", `toml: line 2, column 1: key a\nb\x1b[31m is already defined`},
	} {
		var m map[string]any
		err := Decode([]byte(c.in), &m)
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: error %v, want %s", c.in, err, c.want)
		}
		var e *Error
		if !errors.As(err, &e) || e.Line == 0 {
			t.Errorf("%q: %#v is not an *Error with its line", c.in, err)
		}
	}
}
