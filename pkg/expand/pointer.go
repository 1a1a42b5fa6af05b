package expand

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/retval/retval/pkg/retain"
)

// Pointer is a parsed RFC 6901 JSON pointer. The zero Pointer is "", which
// selects the whole document.
type Pointer struct {
	text string
	toks []string
}

// ParsePointer parses an RFC 6901 pointer: empty, or "/"-separated
// reference tokens in which "~1" stands for "/" and "~0" for "~". A "~"
// followed by anything else is an error (bad_pointer).
func ParsePointer(s string) (Pointer, error) {
	if s == "" {
		return Pointer{}, nil
	}
	if s[0] != '/' {
		if msysPath(s) {
			return Pointer{}, retain.Errorf(retain.CodeBadPointer, "pointer %q is a Windows path: Git Bash turns an argument that starts with \"/\" into one when it runs a Windows program; run the command as MSYS_NO_PATHCONV=1 retval ... to pass the pointer as written", s)
		}
		if jq, ok := JQPath(s); ok {
			return Pointer{}, pointerErr(&PointerError{Pointer: s, Suggestions: []string{jq},
				Msg: fmt.Sprintf("pointer %q is a jq path, not an RFC 6901 pointer: a pointer is \"/\"-separated member names and indices, \"\" the whole document", s)})
		}
		return Pointer{}, retain.Errorf(retain.CodeBadPointer, "pointer %q must be empty (the whole document) or start with \"/\", as in %q", s, "/"+s)
	}
	parts := strings.Split(s[1:], "/")
	for i, p := range parts {
		for j := 0; j < len(p); j++ {
			if p[j] == '~' && (j+1 == len(p) || p[j+1] != '0' && p[j+1] != '1') {
				return Pointer{}, retain.Errorf(retain.CodeBadPointer, "pointer %q: \"~\" must be followed by 0 or 1 (write ~0 for \"~\" and ~1 for \"/\")", s)
			}
		}
		if strings.IndexByte(p, '~') >= 0 {
			parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
		}
	}
	return Pointer{text: s, toks: parts}, nil
}

// msysPath reports whether s is what Git Bash (MSYS) makes of an argument
// like "/items" when it runs a Windows program: a drive letter, ":" and a
// slash ("C:/Program Files/Git/items"). No pointer starts that way.
func msysPath(s string) bool {
	return len(s) >= 3 && (s[0]|0x20 >= 'a' && s[0]|0x20 <= 'z') && s[1] == ':' && (s[2] == '/' || s[2] == '\\')
}

// String returns the pointer as written.
func (p Pointer) String() string { return p.text }

// Tokens returns the decoded reference tokens.
func (p Pointer) Tokens() []string { return p.toks }

// prefix renders the pointer made of the first n tokens, for messages.
func (p Pointer) prefix(n int) string {
	var b strings.Builder
	for _, t := range p.toks[:n] {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// arrayIndex reads an RFC 6901 array index: "0" or digits without a
// leading zero. An index too large for int64 is returned as -1: it exists
// in no array. The array is at p's first d tokens.
func arrayIndex(p Pointer, d int) (int64, error) {
	tok := p.toks[d]
	at := func() string { return where(p.prefix(d)) }
	switch {
	case tok == "-":
		return 0, retain.Errorf(retain.CodeBadPointer, "index \"-\" in the array %s names the element after the last one, which does not exist; use an index from 0", at())
	case tok == "" || strings.TrimLeft(tok, "0123456789") != "":
		return 0, retain.Errorf(retain.CodeBadPointer, "%q is not an index into the array %s: use a number from 0", tok, at())
	case len(tok) > 1 && tok[0] == '0':
		fixed := strings.TrimLeft(tok, "0")
		if fixed == "" {
			fixed = "0"
		}
		return 0, retain.Errorf(retain.CodeBadPointer, "index %q into the array %s has a leading zero; write %s", tok, at(), fixed)
	}
	n, err := strconv.ParseInt(tok, 10, 64)
	if err != nil {
		return -1, nil
	}
	return n, nil
}
