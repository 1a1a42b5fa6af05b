package expand

import (
	"errors"
	"strings"
	"testing"

	"github.com/retval/retval/pkg/retain"
)

func TestJQPath(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{".a.b[3]", "/a/b/3", true},
		{`.["x/y"]`, "/x~1y", true},
		{`.["x/y"].z`, "/x~1y/z", true},
		{`."m~n"`, "/m~0n", true},
		{`.a."b c"[0]`, "/a/b c/0", true},
		{".auth.oauth2", "/auth/oauth2", true},
		{".a?.b", "/a/b", true},
		{".[0][1]", "/0/1", true},
		{".", "", true},
		{".a[]", "", false},
		{".a | .b", "", false},
		{".a[01]", "", false},
		{".a[-1]", "", false},
		{"a.b", "", false},
		{"..", "", false},
		{`.["unterminated]`, "", false},
	} {
		got, ok := JQPath(tc.in)
		if ok != tc.ok || got != tc.want {
			t.Errorf("JQPath(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// suggestDoc has the shapes mistakes are made on: near names, a name
// differing in case, names holding "/" and "~", arrays, duplicates.
const suggestDoc = `{"auth": {"oauth2": {"url": "https://a"}, "OAuth": 2, "basic": {"user": "u"}},
 "https://x.example/a": {"v": 1}, "https:": {"w": 2}, "a/b/c": 3, "m~n": [1, {"k": 2}],
 "items": [{"id": 1}, {"id": 2}], "urls": {"https://b.example/x": true}, "dup": 1, "dup": 2, "dups": 3, "version": "1.0.0"}`

// TestSuggestionsResolve: every pointer an error suggests selects a value
// of the document, and the suggestions expected are there.
func TestSuggestionsResolve(t *testing.T) {
	for _, tc := range []struct {
		ptr  string
		want []string // suggestions that must be among those given
	}{
		{".auth.oauth2", []string{"/auth/oauth2"}},
		{`.["https://x.example/a"].v`, []string{"/https:~1~1x.example~1a/v"}},
		{".items[1].id", []string{"/items/1/id"}},
		{"/auth/oauth3/url", []string{"/auth/oauth2/url", "/auth/OAuth"}},
		{"/Auth/basic", []string{"/auth/basic"}},
		{"/https://x.example/a/v", []string{"/https:~1~1x.example~1a/v"}},
		{"/https://x.example/a", []string{"/https:~1~1x.example~1a"}},
		{"/a/b/c", []string{"/a~1b~1c"}},
		{"/m~0n/1/kk", []string{"/m~0n/1/k"}},
		{"/versoin", []string{"/version"}},
		{"/dps", []string{"/dups"}},
		{"/zz", nil},
		{"/auth/basic/usr", []string{"/auth/basic/user"}},
		{"/nothing-like-it", nil},
	} {
		for _, chunk := range []int{3, chunkSize} {
			p, err := ParsePointer(tc.ptr)
			if err == nil {
				_, err = findPointer(strings.NewReader(suggestDoc), int64(len(suggestDoc)), p, chunk)
			}
			var pe *PointerError
			if retain.CodeOf(err) != retain.CodeBadPointer || !errors.As(err, &pe) {
				t.Fatalf("%s: %v; want a bad_pointer PointerError", tc.ptr, err)
			}
			for _, w := range tc.want {
				found := false
				for _, s := range pe.Suggestions {
					found = found || s == w
				}
				if !found {
					t.Errorf("%s: suggestions %q lack %q\n%v", tc.ptr, pe.Suggestions, w, err)
				}
			}
			for _, s := range pe.Suggestions {
				sp, err := ParsePointer(s)
				if err == nil {
					_, err = findPointer(strings.NewReader(suggestDoc), int64(len(suggestDoc)), sp, chunk)
				}
				if err != nil {
					t.Errorf("%s: suggestion %q does not resolve: %v", tc.ptr, s, err)
				}
			}
			if tc.want == nil && len(pe.Suggestions) > 0 {
				t.Errorf("%s: suggests %q for a name like none", tc.ptr, pe.Suggestions)
			}
		}
	}
}

// TestSuggestionsMessage: what the model reads.
func TestSuggestionsMessage(t *testing.T) {
	for ptr, want := range map[string]string{
		".auth.oauth2":              `pointer ".auth.oauth2" is a jq path, not an RFC 6901 pointer: a pointer is "/"-separated member names and indices, "" the whole document; did you mean "/auth/oauth2"?`,
		"/https://x.example/a/v":    `pointer "/https://x.example/a/v" selects nothing: the object at "/https:" has no member ""; the object at the top level has a member "https://x.example/a": a "/" in a member name is written ~1 (and "~" ~0); did you mean "/https:~1~1x.example~1a/v"? (list its members with --outline /https:, or "outline": "/https:" in a reference)`,
		"/urls/https://b.example/x": `pointer "/urls/https://b.example/x" selects nothing: the object at "/urls" has no member "https:"; the object at "/urls" has a member "https://b.example/x": a "/" in a member name is written ~1 (and "~" ~0); did you mean "/urls/https:~1~1b.example~1x"? (list its members with --outline /urls, or "outline": "/urls" in a reference)`,
		"/auth/oauth3":              `pointer "/auth/oauth3" selects nothing: the object at "/auth" has no member "oauth3"; did you mean "/auth/oauth2" or "/auth/OAuth"? (list its members with --outline /auth, or "outline": "/auth" in a reference)`,
	} {
		_, _, err := find(t, suggestDoc, ptr, chunkSize)
		if err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", ptr, err, want)
		}
	}
}

// TestTooLargeNamesOutline: a pointer into a container over the lookup
// bound names the outline that lists it, and that outline answers.
func TestTooLargeNamesOutline(t *testing.T) {
	doc := `{"big": {` + strings.Repeat(`"k": "vvvvvvvvvvvvvvvvvvvv", `, 20) + `"z": 1}}`
	rs := newStore(t, map[string]string{"c": doc})
	out, err := rs.Lookups([]Lookup{{Ref: mustRef(t, `{"$ref": "c", "pointer": "/big"}`)}}, Budget{LookupBytes: 200}, &Spent{})
	if err != nil {
		t.Fatal(err)
	}
	e := out[0].Err
	if retain.CodeOf(e) != retain.CodeTooLarge || !strings.Contains(e.Error(), `list its members with --outline /big (or the reference {"$ref":"c","outline":"/big"})`) {
		t.Fatalf("too large: %v", e)
	}
	out, err = rs.Lookups([]Lookup{{Ref: mustRef(t, `{"$ref":"c","outline":"/big"}`)}}, Budget{LookupBytes: 200}, &Spent{})
	if err != nil || out[0].Err != nil || !strings.HasPrefix(string(out[0].Text), `[outline of "/big": object, 21 members,`) {
		t.Fatalf("the outline named: %v %v %q", err, out[0].Err, out[0].Text)
	}
	if len(out[0].Text) > 200 || !strings.Contains(string(out[0].Text), `next: {"$ref":"c","outline":"/big","after":`) {
		t.Fatalf("outline within the bound, naming the next page: %q", out[0].Text)
	}
}
