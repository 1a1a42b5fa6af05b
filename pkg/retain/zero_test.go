package retain

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestZeroOptionsAreDefaults builds every options struct of the package
// empty: each means SPEC's defaults, never "unlimited" or a panic.
func TestZeroOptionsAreDefaults(t *testing.T) {
	if got, want := (Limits{}).Effective(), Effective(DefaultLimits()); got != want {
		t.Errorf("Limits{}.Effective() = %+v, want the defaults %+v", got, want)
	}
	var none Limits
	none.Threshold, none.PreviewBytes, none.MaxValueSize, none.Grace = Unlimited, Unlimited, Unlimited, Unlimited
	e := none.Effective()
	if e.Threshold != 0 || e.PreviewBytes != 0 || e.MaxValueSize != 0 || e.Grace != 0 || e.PeekLines != 400 {
		t.Errorf("Unlimited fields: %+v", e)
	}

	s := testStore(t)
	small := []byte("small\n")
	var out bytes.Buffer
	res, err := s.Retain(bytes.NewReader(small), &out, RetainOptions{Run: "r", Call: "small"})
	if err != nil || !res.Verbatim || out.String() != "small\n" {
		t.Fatalf("a small result with empty options: %+v %v %q (the default threshold passes it through)", res, err, out.String())
	}
	big := []byte(strings.Repeat("a line of text\n", 3000)) // 45,000 bytes
	res, err = s.Retain(bytes.NewReader(big), io.Discard, RetainOptions{Run: "r", Call: "big"})
	if err != nil || !res.Retained || res.Descriptor.Compression != CompressNone {
		t.Fatalf("a big result with empty options: %+v %v", res, err)
	}
	// The default preview budget, and the default policy (legacy).
	if n := strings.Count(res.Stub, "\n"); n < 10 || !strings.Contains(res.Stub, "[read more: peek big --lines ") {
		t.Errorf("stub with default settings:\n%s", res.Stub)
	}
	st, err := s.Replay(bytes.NewReader(big), io.Discard, "r", "big", StubSettings{})
	if err != nil || st != res.Stub {
		t.Errorf("replay with StubSettings{} gives %q, %v", st, err)
	}
	// max-value-size 16 MiB applies by default.
	huge := bytes.Repeat([]byte("x"), 16<<20+1)
	res, err = s.Retain(bytes.NewReader(huge), io.Discard, RetainOptions{Run: "r", Call: "huge"})
	if err != nil || res.Retained || res.NotRetained == "" {
		t.Errorf("a value over the default max-value-size: %+v %v", res, err)
	}

	if rep, err := s.Verify(VerifyOptions{}); err != nil || !rep.OK() || rep.Values != 1 {
		t.Errorf("Verify(VerifyOptions{}): %+v %v", rep, err)
	}

	if c := CodeOf(nil); c != "" {
		t.Errorf("CodeOf(nil) = %q, want \"\"", c)
	}
	if c := CodeOf(io.EOF); c != CodeIO {
		t.Errorf("CodeOf(io.EOF) = %q", c)
	}
}
