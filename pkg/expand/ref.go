package expand

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/retval/retval/internal/jsonstr"
	"github.com/retval/retval/pkg/peek"
	"github.com/retval/retval/pkg/retain"
)

// RefKind is what a reference selects.
type RefKind uint8

const (
	RefWhole   RefKind = iota // the whole value
	RefBytes                  // bytes [Start, End)
	RefLines                  // lines Start..End, 1-based, inclusive
	RefPointer                // the JSON value at Pointer
	RefList                   // a page of the run's catalogue from value Page ($list_results)
	RefOutline                // the members or elements of the JSON value at Pointer, from position From
)

// As says how a pointer selection is returned.
type As string

const (
	// AsLexeme returns the value's original bytes (the default).
	AsLexeme As = "lexeme"
	// AsString returns the decoded text of a JSON string.
	AsString As = "string"
	// AsValue, in an expand template only, inserts the JSON value itself.
	AsValue As = "value"
)

// Ref is a parsed reference: the JSON form models and templates use, or
// the same built from command-line flags (RefFields). Both go through
// RefFields.Ref, so they accept and refuse exactly the same things.
type Ref struct {
	Kind RefKind
	// ID is the value id (or call id) the reference names; empty for RefList.
	ID string
	// Start and End: bytes [Start, End) for RefBytes, lines Start..End for
	// RefLines. End is peek.ToEnd for a range to the end ("670-").
	Start, End int64
	// Tail > 0 selects the last Tail lines or bytes ("-50"); Start and End
	// are then 0.
	Tail    int64
	Pointer Pointer
	As      As     // for RefPointer: AsLexeme, AsString or AsValue
	SHA256  string // lowercase hex the value's digest must equal, or ""
	Page    int64  // for RefList: the value the page starts at, 0 first
	// Line, for RefPointer and RefOutline, is the line of an NDJSON value
	// whose document the pointer applies to; 0: the whole value.
	Line int64
	// From, for RefOutline, is the first position listed ("after": From-1).
	From int64
}

// RefFields are a reference's fields as given, before they are checked:
// nil means absent.
type RefFields struct {
	ID      *string
	Bytes   *peek.RangeArg
	Lines   *peek.RangeArg
	Pointer *string
	As      *string
	SHA256  *string
	List    *int64
	Outline *string
	After   *int64
}

func badRef(format string, args ...any) error {
	return retain.Errorf(retain.CodeBadReference, format, args...)
}

// refHelp is appended to messages about malformed references.
const refHelp = `; a reference is {"$ref": "ID"} with at most one of "bytes": [start, end] (or "N-", "-N"), "lines": [first, last] (or "N", "N-", "-N"), "pointer": "/a/0" (with "as": "lexeme" or "string") or "outline": "/a" (with "after": N), a pointer or outline optionally inside one line's document of an NDJSON value ("lines": [n, n]), and optionally "sha256"; or {"$list_results": N}`

// Ref checks the fields and returns the reference they make. Malformed
// combinations are bad_reference; a malformed pointer is bad_pointer.
func (f RefFields) Ref() (Ref, error) {
	if f.List != nil {
		if f.ID != nil || f.Bytes != nil || f.Lines != nil || f.Pointer != nil || f.As != nil || f.SHA256 != nil || f.Outline != nil || f.After != nil {
			return Ref{}, badRef("$list_results takes no other keys" + refHelp)
		}
		if *f.List < 0 {
			return Ref{}, badRef("$list_results %d: a page starts at a value counted from 0 (0 first, then the \"next\" of the page before)", *f.List)
		}
		return Ref{Kind: RefList, Page: *f.List}, nil
	}
	if f.ID == nil {
		return Ref{}, badRef("no \"$ref\" naming the value" + refHelp)
	}
	if *f.ID == "" {
		return Ref{}, badRef("\"$ref\" is empty: name a value id, as shown in its stub")
	}
	r := Ref{Kind: RefWhole, ID: *f.ID}
	n := 0
	if f.Bytes != nil {
		n++
		r.Kind, r.Start, r.End, r.Tail = RefBytes, f.Bytes.First, f.Bytes.Last, f.Bytes.Tail
	}
	if f.Lines != nil {
		n++
		r.Kind, r.Start, r.End, r.Tail = RefLines, f.Lines.First, f.Lines.Last, f.Lines.Tail
	}
	if f.Pointer != nil {
		n++
		p, err := ParsePointer(*f.Pointer)
		if err != nil {
			return Ref{}, err
		}
		r.Kind, r.Pointer, r.As = RefPointer, p, AsLexeme
	}
	if f.Outline != nil {
		n++
		p, err := ParsePointer(*f.Outline)
		if err != nil {
			return Ref{}, err
		}
		r.Kind, r.Pointer = RefOutline, p
	}
	if f.Lines != nil && (f.Pointer != nil || f.Outline != nil) && n == 2 {
		// A pointer or outline inside one line's document.
		l := *f.Lines
		if !l.Closed() || l.First != l.Last {
			return Ref{}, badRef("\"lines\" with a pointer or outline names the one line whose document it applies to, as in [%d, %d]; %q is not one line"+refHelp, max(l.First, 1), max(l.First, 1), l.String())
		}
		if l.First < 1 {
			return Ref{}, badRef("\"lines\": [%d, %d]: lines count from 1", l.First, l.Last)
		}
		n--
		r.Line, r.Start, r.End, r.Tail = l.First, 0, 0, 0
		if f.Pointer != nil {
			r.Kind = RefPointer
		} else {
			r.Kind = RefOutline
		}
	}
	if n > 1 {
		return Ref{}, badRef("a reference selects by at most one of bytes, lines, pointer and outline" + refHelp)
	}
	if f.After != nil {
		if r.Kind != RefOutline {
			return Ref{}, badRef("\"after\" pages through an outline only" + refHelp)
		}
		if *f.After < 0 {
			return Ref{}, badRef("\"after\": %d: positions count from 0; \"after\": N lists from position N+1", *f.After)
		}
		r.From = *f.After + 1
	}
	if f.As != nil {
		if r.Kind != RefPointer {
			return Ref{}, badRef("\"as\" applies to a pointer selection only" + refHelp)
		}
		switch a := As(*f.As); a {
		case AsLexeme, AsString, AsValue:
			r.As = a
		default:
			return Ref{}, badRef("\"as\": %q: want \"lexeme\" or \"string\"", *f.As)
		}
	}
	if f.SHA256 != nil {
		h := strings.ToLower(*f.SHA256)
		if len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" {
			return Ref{}, badRef("\"sha256\": %q is not 64 hex digits; copy the digest from the value's stub", *f.SHA256)
		}
		r.SHA256 = h
	}
	return r, nil
}

// ParseRef parses the JSON form of a reference. Unknown or repeated keys,
// wrong types and trailing data are bad_reference.
func ParseRef(data []byte) (Ref, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	t, err := dec.Token()
	if err != nil || t != json.Delim('{') {
		return Ref{}, badRef("a reference must be a JSON object" + refHelp)
	}
	var f RefFields
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return Ref{}, badRef("reference is not valid JSON: %v", err)
		}
		key := t.(string)
		if seen[key] {
			return Ref{}, badRef("key %q occurs more than once in the reference", key)
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return Ref{}, badRef("reference is not valid JSON: %v", err)
		}
		switch key {
		case "$ref", "pointer", "as", "sha256", "outline":
			var s string
			if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
				return Ref{}, badRef("%q must be a string, not %s", key, raw)
			}
			switch key {
			case "$ref":
				f.ID = &s
			case "pointer":
				f.Pointer = &s
			case "as":
				f.As = &s
			case "outline":
				f.Outline = &s
			default:
				f.SHA256 = &s
			}
		case "bytes", "lines":
			rng, err := parseRangeField(key, raw)
			if err != nil {
				return Ref{}, err
			}
			if key == "bytes" {
				f.Bytes = &rng
			} else {
				f.Lines = &rng
			}
		case "after":
			n, err := strconv.ParseInt(string(raw), 10, 64)
			if err != nil {
				return Ref{}, badRef("\"after\" must be an integer position, as the outline's next names it, not %s", raw)
			}
			f.After = &n
		case "$list_results":
			n, err := strconv.ParseInt(string(raw), 10, 64)
			if err != nil {
				return Ref{}, badRef("\"$list_results\" must be where the page starts, a value counted from 0 (then the \"next\" of the page before), not %s", raw)
			}
			f.List = &n
		default:
			return Ref{}, badRef("unknown key %q in the reference%s", key, refHelp)
		}
	}
	if _, err := dec.Token(); err != nil {
		return Ref{}, badRef("reference is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Ref{}, badRef("trailing data after the reference object")
	}
	return f.Ref()
}

// parseRangeField reads "lines" or "bytes": an array of two integers,
// or a string holding a range as the command line takes it ("670",
// "670-", "-50", "1-40" for lines; "-4096", "100-", "0-100" for bytes).
func parseRangeField(key string, raw json.RawMessage) (peek.RangeArg, error) {
	want := `[1, 40] or a string as on the command line ("670", "670-", "-50")`
	if key == "bytes" {
		want = `[0, 4096] or a string as on the command line ("4096-", "-4096")`
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return peek.RangeArg{}, badRef("%q must be an array of two integers, as in %s, not %s", key, want, raw)
		}
		parse := peek.ParseLines
		if key == "bytes" {
			parse = peek.ParseBytes
		}
		r, err := parse(s)
		if err != nil {
			return peek.RangeArg{}, badRef("%q: %q is not a range: want %s", key, s, want)
		}
		return r, nil
	}
	var nums []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &nums) != nil || len(nums) != 2 {
		return peek.RangeArg{}, badRef("%q must be an array of two integers, as in %s, not %s", key, want, raw)
	}
	var pair [2]int64
	for i, n := range nums {
		v, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil {
			return peek.RangeArg{}, badRef("%q must be an array of two integers, as in %s, not %s", key, want, raw)
		}
		pair[i] = v
	}
	return peek.Between(pair[0], pair[1]), nil
}

// rangeArg is the range of a RefLines or RefBytes reference as typed.
func (r Ref) rangeArg() peek.RangeArg {
	return peek.RangeArg{First: r.Start, Last: r.End, Tail: r.Tail}
}

// MarshalJSON renders the reference in its canonical JSON form, which
// ParseRef reads back as the same Ref.
func (r Ref) MarshalJSON() ([]byte, error) {
	str := func(b []byte, s string) []byte {
		b = append(b, '"')
		b = jsonstr.Append(b, []byte(s))
		return append(b, '"')
	}
	if r.Kind == RefList {
		return fmt.Appendf(nil, `{"$list_results":%d}`, r.Page), nil
	}
	b := str([]byte(`{"$ref":`), r.ID)
	switch r.Kind {
	case RefBytes, RefLines:
		key := "bytes"
		if r.Kind == RefLines {
			key = "lines"
		}
		if rg := r.rangeArg(); rg.Closed() {
			b = fmt.Appendf(b, `,"%s":[%d,%d]`, key, r.Start, r.End)
		} else {
			b = fmt.Appendf(b, `,"%s":"%s"`, key, rg)
		}
	case RefPointer:
		if r.Line > 0 {
			b = fmt.Appendf(b, `,"lines":[%d,%d]`, r.Line, r.Line)
		}
		b = str(append(b, `,"pointer":`...), r.Pointer.String())
		if r.As != AsLexeme {
			b = str(append(b, `,"as":`...), string(r.As))
		}
	case RefOutline:
		if r.Line > 0 {
			b = fmt.Appendf(b, `,"lines":[%d,%d]`, r.Line, r.Line)
		}
		b = str(append(b, `,"outline":`...), r.Pointer.String())
		if r.From > 0 {
			b = fmt.Appendf(b, `,"after":%d`, r.From-1)
		}
	}
	if r.SHA256 != "" {
		b = str(append(b, `,"sha256":`...), r.SHA256)
	}
	return append(b, '}'), nil
}

// String is the canonical JSON form, for messages.
func (r Ref) String() string {
	b, _ := r.MarshalJSON()
	return string(b)
}

// checkDigest compares the reference's sha256, if any, with the value's.
func (r Ref) checkDigest(d *retain.Descriptor) error {
	if r.SHA256 == "" || r.SHA256 == d.SHA256 {
		return nil
	}
	return retain.Errorf(retain.CodeDigestMismatch, "value %q has sha256 %s, not %s as the reference says: the reference is for other bytes; check the id, or drop \"sha256\" to read what the value holds now", d.ID, d.SHA256, r.SHA256)
}

// ParseBatch reads a JSON array of references, as `retval resolve --batch`
// takes on stdin. An element that is not a valid reference becomes a Lookup
// carrying its error (it is answered with that error, and counts); input
// that is not a JSON array is bad_reference.
func ParseBatch(r io.Reader) ([]Lookup, error) {
	const want = `: want a JSON array of references, e.g. [{"$ref": "c1", "lines": [1, 40]}, {"$ref": "c2", "pointer": "/name"}]`
	dec := json.NewDecoder(r)
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return nil, badRef("the batch is not a JSON array" + want)
	}
	var out []Lookup
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, badRef("the batch is not valid JSON: %v%s", err, want)
		}
		ref, err := ParseRef(raw)
		out = append(out, Lookup{Ref: ref, Err: err})
	}
	if _, err := dec.Token(); err != nil {
		return nil, badRef("the batch is not valid JSON: %v%s", err, want)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, badRef("trailing data after the batch's array" + want)
	}
	return out, nil
}
