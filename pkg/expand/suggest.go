package expand

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/retval/retval/internal/jsonscan"
	"github.com/retval/retval/internal/textdist"
	"github.com/retval/retval/pkg/retain"
)

// PointerError is a pointer that selects nothing or is not a pointer,
// with the pointers that would select something: the members nearest a
// name not found, the pointer with a member name's "/" written as "~1",
// the RFC 6901 form of a jq path. Suggestions are escaped pointers, each
// one tried against the document (a jq path's is what the path means).
type PointerError struct {
	Pointer     string
	Msg         string
	Suggestions []string
	// Outline is the pointer of the container whose members an outline
	// would list, when that helps; "" with Suggestions alone.
	Outline string
	// HasOutline says Outline is set (it may be "", the whole document).
	HasOutline bool
}

func (e *PointerError) Error() string {
	var b strings.Builder
	b.WriteString(e.Msg)
	switch len(e.Suggestions) {
	case 0:
	case 1:
		b.WriteString("; did you mean " + strconv.Quote(e.Suggestions[0]) + "?")
	default:
		qs := make([]string, len(e.Suggestions))
		for i, s := range e.Suggestions {
			qs[i] = strconv.Quote(s)
		}
		b.WriteString("; did you mean " + strings.Join(qs[:len(qs)-1], ", ") + " or " + qs[len(qs)-1] + "?")
	}
	if e.HasOutline {
		b.WriteString(" (list its members with --outline " + retain.ShellQuote(e.Outline) + `, or "outline": ` + strconv.Quote(e.Outline) + " in a reference)")
	}
	return b.String()
}

func pointerErr(e *PointerError) error {
	return &retain.Error{Code: retain.CodeBadPointer, Err: e}
}

// JQPath converts a jq path (".a.b[3]", `.["x/y"]`, `."k"`, ".") to the
// RFC 6901 pointer that selects the same value, or reports false for
// anything else (iteration, slices, filters).
func JQPath(s string) (string, bool) {
	if s == "" || s[0] != '.' {
		return "", false
	}
	var b strings.Builder
	i := 0
	token := func(t string) { b.WriteString("/" + jsonscan.EscapeToken(t)) }
	for i < len(s) {
		switch {
		case s[i] == '.' && i+1 < len(s) && s[i+1] == '"':
			t, n, ok := jqString(s[i+1:])
			if !ok {
				return "", false
			}
			token(t)
			i += 1 + n
		case s[i] == '.' && i+1 < len(s) && s[i+1] == '[':
			i++
		case s[i] == '.':
			j := i + 1
			for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || j > i+1 && s[j] >= '0' && s[j] <= '9') {
				j++
			}
			if j == i+1 {
				if i == 0 && len(s) == 1 {
					return "", true // "." is the whole document
				}
				return "", false
			}
			token(s[i+1 : j])
			i = j
		case s[i] == '[':
			end := strings.IndexByte(s[i:], ']')
			if end < 0 {
				return "", false
			}
			in := s[i+1 : i+end]
			if strings.HasPrefix(in, `"`) {
				t, n, ok := jqString(in)
				if !ok || n != len(in) {
					return "", false
				}
				token(t)
			} else {
				if _, err := strconv.ParseUint(in, 10, 63); err != nil || len(in) > 1 && in[0] == '0' {
					return "", false
				}
				token(in)
			}
			i += end + 1
		case s[i] == '?':
			i++
		default:
			return "", false
		}
	}
	return b.String(), true
}

// jqString reads the JSON string at the start of s and returns its text
// and length.
func jqString(s string) (string, int, bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	var t string
	if err := dec.Decode(&t); err != nil {
		return "", 0, false
	}
	n := int(dec.InputOffset())
	if !strings.HasSuffix(s[:n], `"`) {
		return "", 0, false
	}
	return t, n, true
}

// maxSuggestions is how many nearest members a message names.
const maxSuggestions = 3

// suggestMembers reads again the object that starts at offset start (its
// '{') and returns the pointers a mistaken token d of p may have meant:
// a member whose name is tokens d.. joined by "/" (written with "~1"), and
// the members nearest tok by edit distance.
func (w *walker) suggestMembers(start int64, d int, nearest bool) (slashName string, slash suggestion, near []suggestion, err error) {
	p := w.p
	tok := p.toks[d]
	s := w.s.Fork(start)
	if _, err := s.Expect("{"); err != nil {
		return "", suggestion{}, nil, err
	}
	// The names tokens d.. would make with their "/" kept, longest first.
	var joined []string
	for k := len(p.toks); k > d+1; k-- {
		joined = append(joined, strings.Join(p.toks[d:k], "/"))
	}
	slashAt := -1
	limit := textdist.Limit(tok)
	type cand struct {
		name string
		dist int
	}
	var best []cand
	if c, err := s.Peek(); err != nil || c == '}' {
		return "", suggestion{}, nil, err
	}
	for {
		if _, err := s.Expect(`"`); err != nil {
			return "", suggestion{}, nil, err
		}
		raw, _, cut, err := s.Name(1024)
		if err != nil {
			return "", suggestion{}, nil, err
		}
		name := string(raw)
		if !cut {
			for i, j := range joined {
				if name == j && (slashAt < 0 || i < slashAt) {
					slashAt = i
				}
			}
			dist := limit + 1
			if nearest && tok != "" {
				if d := len(name) - len(tok); d <= limit && -d <= limit {
					dist = textdist.Distance(strings.ToLower(name), strings.ToLower(tok))
				}
			}
			// A name that shares nothing with tok is no suggestion.
			if dist <= limit && dist < max(len(tok), len(name)) {
				if !strings.EqualFold(name, tok) {
					dist++ // a difference of case alone comes first
				}
				at := len(best)
				for at > 0 && best[at-1].dist > dist {
					at--
				}
				if at < maxSuggestions {
					best = append(best, cand{})
					copy(best[at+1:], best[at:])
					best[at] = cand{name, dist}
					best = best[:min(len(best), maxSuggestions)]
				}
			}
		}
		if _, err := s.Expect(":"); err != nil {
			return "", suggestion{}, nil, err
		}
		if _, err := s.SkipValue(); err != nil {
			return "", suggestion{}, nil, err
		}
		c, err := s.Expect(",}")
		if err != nil {
			return "", suggestion{}, nil, err
		}
		if c == '}' {
			break
		}
	}
	prefix := p.prefix(d)
	if slashAt >= 0 {
		k := len(p.toks) - slashAt
		slashName = joined[slashAt]
		m := prefix + "/" + jsonscan.EscapeToken(slashName)
		slash = suggestion{full: m + Pointer{toks: p.toks[k:]}.prefix(len(p.toks)-k), member: m}
	}
	for _, c := range best {
		m := prefix + "/" + jsonscan.EscapeToken(c.name)
		near = append(near, suggestion{full: m + Pointer{toks: p.toks[d+1:]}.prefix(len(p.toks)-d-1), member: m})
	}
	return slashName, slash, near, nil
}
