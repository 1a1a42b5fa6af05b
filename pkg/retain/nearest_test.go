package retain

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// A mistyped value id is answered with the run's nearest ids.
func TestUnknownValueNearest(t *testing.T) {
	s := Open(t.TempDir())
	for _, c := range []string{"toolu_01abc", "toolu_01abd", "toolu_99zzz", "c1", "build-log", "step-10", "s2.stderr"} {
		if _, err := s.Retain(strings.NewReader("x"), io.Discard, RetainOptions{Run: "r", Call: c, Limits: Limits{Threshold: Unlimited}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		typed string
		want  []ID
	}{
		{"toolu_01abe", []ID{"toolu_01abc", "toolu_01abd"}},
		{"toolu_01acb", []ID{"toolu_01abc", "toolu_01abd"}},
		{"c1x", []ID{"c1"}},
		{"#c1x", []ID{"c1"}},
		// Ids that differ only in their numbers are other calls of a
		// sequence, never misspellings of each other.
		{"c2", nil},
		{"#c2", nil},
		{"step-9", nil},
		{"step-11", nil},
		{"s3.stderr", nil},
		{"build", []ID{"build-log"}},
		{"BUILD-LOG", []ID{"build-log"}},
		{"zzz", nil},
		{"x", nil},
	} {
		_, err := s.OpenValue("r", tc.typed)
		var uv *UnknownValueError
		if !errors.As(err, &uv) || !errors.Is(err, ErrNotFound) {
			t.Fatalf("%s: %v", tc.typed, err)
		}
		if !reflect.DeepEqual(uv.Nearest, tc.want) {
			t.Errorf("%s: nearest %v, want %v", tc.typed, uv.Nearest, tc.want)
		}
		if len(tc.want) > 0 && !strings.Contains(err.Error(), `did you mean "`+string(tc.want[0])+`"`) {
			t.Errorf("%s: %v", tc.typed, err)
		}
	}
}

// A near-typo of a call id that was sanitized ("s2.stder" for the value
// of "s2.stderr", id "s2_stderr-<8 hex>") is answered with that value.
func TestUnknownValueNearestSanitized(t *testing.T) {
	s := Open(t.TempDir())
	if _, err := s.Retain(strings.NewReader("x"), io.Discard, RetainOptions{Run: "r", Call: "s2.stderr", Limits: Limits{Threshold: Unlimited}}); err != nil {
		t.Fatal(err)
	}
	id, _ := Sanitize("s2.stderr")
	for _, typed := range []string{"s2.stder", "s2.stderrr", "s2_stder"} {
		_, err := s.OpenValue("r", typed)
		var uv *UnknownValueError
		if !errors.As(err, &uv) || !reflect.DeepEqual(uv.Nearest, []ID{id}) {
			t.Errorf("%s: %v", typed, err)
		}
	}
}
