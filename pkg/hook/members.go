package hook

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/retval/retval/internal/mcpresult"
)

// A hook input holds the tool's result, which may be megabytes, beside a
// few small members. json.Unmarshal into a struct checks the whole input
// and then decodes it, skipping the members it has no field for, and
// copying every member it fills a json.RawMessage with: two passes over
// the result, at encoding/json's speed, and a copy of what the hook only
// hands on, on every call. The functions below check it once (json.Valid)
// and decode only the members the struct names, a json.RawMessage taken
// as a slice of the input.

// decodeMembers sets v's fields from the JSON object b as json.Unmarshal(b,
// v) would, and returns b's members. ok is false where it might not say
// the same (b not a valid object, a member that does not decode, a member
// named in another case than its field's tag, an object member given
// twice); v is then left zero and the caller uses json.Unmarshal, for its
// answer and its error. v points to a zero struct.
func decodeMembers(b []byte, v any) (m map[string]json.RawMessage, ok bool) {
	if !json.Valid(b) {
		return nil, false
	}
	return decodeFields(b, v)
}

// decodeFields is decodeMembers for an object already known to be valid
// JSON (a member of a valid input).
//
// Every field of v's struct must have a json tag naming its member. A
// json.RawMessage is set to its member's bytes in raw, a []json.RawMessage
// to its elements', a struct (or a pointer to one) from its member's
// members in turn; any other field by json.Unmarshal of its member.
func decodeFields(raw []byte, v any) (map[string]json.RawMessage, bool) {
	rv := reflect.ValueOf(v).Elem()
	m, ok := decodeObject(raw, rv)
	if !ok {
		rv.SetZero()
		return nil, false
	}
	return m, true
}

var (
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	rawMessagesType = reflect.TypeFor[[]json.RawMessage]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

func decodeObject(raw []byte, rv reflect.Value) (map[string]json.RawMessage, bool) {
	m, repeats, ok := mcpresult.MembersRepeats(raw)
	if !ok {
		return nil, false
	}
	rt := rv.Type()
	names := make([]string, rt.NumField())
	for i := range names {
		name, opts, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" || !rt.Field(i).IsExported() || strings.Contains(opts, "string") {
			return nil, false
		}
		names[i] = name
	}
	for k := range m {
		for _, name := range names {
			if k != name && strings.EqualFold(k, name) {
				return nil, false // encoding/json would take it for the field
			}
		}
	}
	for i, name := range names {
		raw, ok := m[name]
		if !ok {
			continue
		}
		f := rv.Field(i)
		switch t := f.Type(); {
		case t == rawMessageType:
			f.Set(reflect.ValueOf(raw)) // "null" too, as encoding/json
		case t == rawMessagesType:
			if string(raw) == "null" {
				f.SetZero()
				continue
			}
			elems, ok := mcpresult.Elements(raw)
			if !ok {
				return nil, false
			}
			f.Set(reflect.ValueOf(elems))
		case isStruct(t):
			if repeats {
				return nil, false // encoding/json decodes each one into the same struct
			}
			if string(raw) == "null" {
				if t.Kind() == reflect.Pointer {
					f.SetZero()
				}
				continue // a struct is left as it is
			}
			if t.Kind() == reflect.Pointer {
				f.Set(reflect.New(t.Elem()))
				f = f.Elem()
			}
			if _, ok := decodeObject(raw, f); !ok {
				return nil, false
			}
		default:
			if json.Unmarshal(raw, f.Addr().Interface()) != nil {
				return nil, false
			}
		}
	}
	return m, true
}

// isStruct reports whether decodeObject decodes a field of type t member
// by member: a struct or a pointer to one, which does not decode itself.
func isStruct(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct && !reflect.PointerTo(t).Implements(unmarshalerType)
}
