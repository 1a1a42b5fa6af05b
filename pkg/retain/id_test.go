package retain

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func TestSanitizeTable(t *testing.T) {
	long := strings.Repeat("a", 10000)
	for _, tc := range []struct{ in, want string }{
		{"call_01-A", "call_01-A"},
		{strings.Repeat("x", 64), strings.Repeat("x", 64)},
		{"../../etc/passwd", "______etc_passwd-"},
		{"a/b", "a_b-"},
		{"a?b", "a_b-"},
		{"toolu_01ABC.json", "toolu_01ABC_json-"},
		{strings.Repeat("x", 65), strings.Repeat("x", 55) + "-"},
		{long, strings.Repeat("a", 55) + "-"},
		{"é", "__-"},
		// Windows device names, in any case, are mapped on every system.
		{"CON", "CON-"},
		{"nul", "nul-"},
		{"Com1", "Com1-"},
		{"lpt9", "lpt9-"},
		{"CONS", "CONS"},
	} {
		got, err := Sanitize(tc.in)
		if err != nil {
			t.Fatalf("Sanitize(%.20q): %v", tc.in, err)
		}
		if !idPattern.MatchString(string(got)) {
			t.Errorf("Sanitize(%.20q) = %q, not a valid id", tc.in, got)
		}
		if tc.want == tc.in {
			if string(got) != tc.in {
				t.Errorf("clean id %q changed to %q", tc.in, got)
			}
			continue
		}
		if !strings.HasPrefix(string(got), tc.want) || len(got) != len(tc.want)+8 {
			t.Errorf("Sanitize(%.20q) = %q, want %q + 8 hex digits", tc.in, got, tc.want)
		}
	}
	if _, err := Sanitize(""); CodeOf(err) != CodeUsage {
		t.Errorf("Sanitize(\"\") = %v, want a usage error", err)
	}
	// Ids that differ only in the disallowed byte stay distinct.
	a, _ := Sanitize("a/b")
	b, _ := Sanitize("a?b")
	if a == b {
		t.Errorf("a/b and a?b both map to %q", a)
	}
	// The suffix is the first 8 hex digits of XXH3-64 of the original.
	if got, _ := Sanitize("a/b"); string(got) != "a_b-"+xxh3Hex("a/b")[:8] {
		t.Errorf("Sanitize(a/b) = %q, want suffix %s", got, xxh3Hex("a/b")[:8])
	}
}

func TestSanitizeProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	seen := map[ID]string{}
	alphabet := []byte("ab/._-?\x00é9Z ")
	for i := 0; i < 200000; i++ {
		n := 1 + r.IntN(80)
		b := make([]byte, n)
		for j := range b {
			b[j] = alphabet[r.IntN(len(alphabet))]
		}
		s := string(b)
		id, err := Sanitize(s)
		if err != nil {
			t.Fatal(err)
		}
		if !idPattern.MatchString(string(id)) {
			t.Fatalf("Sanitize(%q) = %q", s, id)
		}
		if IsClean(s) != (string(id) == s) {
			t.Fatalf("Sanitize(%q) = %q: clean ids must be kept, others changed", s, id)
		}
		if prev, ok := seen[id]; ok && prev != s {
			t.Fatalf("collision: %q and %q both map to %q", prev, s, id)
		}
		seen[id] = s
		// Idempotent: a sanitized id is clean.
		if again, _ := Sanitize(string(id)); again != id {
			t.Fatalf("Sanitize not idempotent on %q", id)
		}
	}
}

func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"call_1", "../../etc/passwd", "a/b", strings.Repeat("z", 100), "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := Sanitize(s)
		if s == "" {
			if err == nil {
				t.Fatal("empty id accepted")
			}
			return
		}
		if err != nil || !idPattern.MatchString(string(id)) {
			t.Fatalf("Sanitize(%q) = %q, %v", s, id, err)
		}
		if IsClean(s) && string(id) != s {
			t.Fatalf("clean %q changed", s)
		}
		if strings.ContainsAny(string(id), "/.") {
			t.Fatalf("%q can name a path", id)
		}
	})
}

func xxh3Hex(s string) string {
	return fmtHex(xxh3HashString(s))
}
