package splice

import (
	"errors"
	"testing"
)

func TestApply(t *testing.T) {
	got, err := Apply("abcdef", Edit{4, 4, "Y"}, Edit{0, 1, "A"}, Edit{4, 4, "Z"}, Edit{2, 3, ""})
	if err != nil || got != "AbdYZef" {
		t.Errorf("got %q, %v", got, err)
	}
	if _, err := Apply("abcdef", Edit{0, 3, "x"}, Edit{2, 4, "y"}); !errors.Is(err, ErrOverlap) {
		t.Errorf("overlapping edits: %v", err)
	}
	if _, err := Apply("abc", Edit{2, 9, ""}); !errors.Is(err, ErrOverlap) {
		t.Errorf("an edit past the end: %v", err)
	}
}

// One-line lists (a TOML array, mcp wrap's args) keep their spacing: an
// insertion and the removal of what it inserted are inverses.
func TestListOneLine(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`[ 'a' ,"b" ]`, `[ "x" ,"y" ,'a' ,"b" ]`},
		{`["a"]`, `["x", "y", "a"]`},
		{`[ ]`, `[ "x", "y"]`},
		{`[]`, `["x", "y"]`},
	} {
		l := parseOneLine(c.src)
		e := l.Insert(c.src, 0, []string{`"x"`, `"y"`}, Layout{})
		got, _ := Apply(c.src, e)
		if got != c.want {
			t.Errorf("%s: inserted %s, want %s", c.src, got, c.want)
			continue
		}
		back, _ := Apply(got, parseOneLine(got).Remove(got, 0, 2, Layout{}))
		if back != c.src {
			t.Errorf("%s: removed back to %s", c.src, back)
		}
	}
}

// parseOneLine finds the elements of a one-line list of quoted strings.
func parseOneLine(src string) List {
	l := List{Open: 0, Close: len(src) - 1}
	for i := 1; i < len(src)-1; i++ {
		if q := src[i]; q == '"' || q == '\'' {
			j := i + 1
			for src[j] != q {
				j++
			}
			l.Items = append(l.Items, Span{i, j + 1})
			i = j
		}
	}
	return l
}
