package hook

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/retval/retval/internal/mcpresult"
)

// A hook input holds the tool's result, which may be megabytes, beside a
// few small members. json.Unmarshal into a struct checks the whole input
// and then decodes it, skipping the members it has no field for: two
// passes over the result, at encoding/json's speed, on every call. The
// functions below check it once (json.Valid) and decode only the members
// the struct names, taken as slices of the input.

// decodeMembers sets v's fields from the JSON object b as json.Unmarshal(b,
// v) would, and returns b's members. ok is false where it might not say
// the same (b not a valid object, a member that does not decode, a member
// named in another case than its field's tag); the caller then uses
// json.Unmarshal, for its answer and its error.
func decodeMembers(b []byte, v any) (m map[string]json.RawMessage, ok bool) {
	if !json.Valid(b) {
		return nil, false
	}
	m, ok = mcpresult.Members(b)
	if !ok || !decodeFields(m, v) {
		return nil, false
	}
	return m, true
}

// decodeFields sets the fields of the struct v points to from the members
// m of a valid JSON object, each as json.Unmarshal of the object would;
// false where it might not (see decodeMembers). Every field must have a
// json tag naming its member.
func decodeFields(m map[string]json.RawMessage, v any) bool {
	rv := reflect.ValueOf(v).Elem()
	rt := rv.Type()
	names := make([]string, rt.NumField())
	for i := range names {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" || !rt.Field(i).IsExported() {
			return false
		}
		names[i] = name
	}
	for k := range m {
		for _, name := range names {
			if k != name && strings.EqualFold(k, name) {
				return false // encoding/json would take it for the field
			}
		}
	}
	for i, name := range names {
		if raw, ok := m[name]; ok {
			if json.Unmarshal(raw, rv.Field(i).Addr().Interface()) != nil {
				return false
			}
		}
	}
	return true
}
