package expand

import (
	"errors"
	"strings"
	"testing"

	"github.com/retval/retval/pkg/retain"
)

// Options structs left empty mean SPEC's defaults: Budget{} is 8 lookups,
// 8 KiB per lookup and 64 KiB per step; Expander{} bounds an expansion at
// 16 MiB. retain.Unlimited, and only it, lifts a bound.
func TestZeroValuesAreDefaults(t *testing.T) {
	quote := strings.Repeat("x", 8191) + `"` // 8 KiB, 8193 bytes escaped
	big := strings.Repeat("y\n", 9<<19)      // 9 MiB
	rs := newStore(t, map[string]string{"q": quote, "over": quote + "z", "big": big, "nl": "a\n"})

	nine := make([]string, 9)
	for i := range nine {
		nine[i] = `{"$ref": "nl"}`
	}
	if _, err := rs.Lookups(lookups(t, nine...), Budget{}, &Spent{}); retain.CodeOf(err) != retain.CodeBudgetExhausted {
		t.Errorf("9 lookups under Budget{}: %v", err)
	}
	ans, err := rs.Lookups(lookups(t, `{"$ref": "over"}`, `{"$ref": "q"}`), Budget{}, &Spent{})
	if err != nil || retain.CodeOf(ans[0].Err) != retain.CodeTooLarge || !strings.Contains(ans[0].Err.Error(), "over the 8192-byte bound") || ans[1].Err != nil {
		t.Errorf("8 KiB + 1 under Budget{}: %v, %+v", err, ans)
	}
	// Eight results of 8,193 escaped bytes pass 64 KiB on the eighth.
	eight := make([]string, 8)
	for i := range eight {
		eight[i] = `{"$ref": "q"}`
	}
	ans, err = rs.Lookups(lookups(t, eight...), Budget{}, &Spent{})
	if err != nil || ans[6].Err != nil || retain.CodeOf(ans[7].Err) != retain.CodeTooLarge || !strings.Contains(ans[7].Err.Error(), "of its 65536 bytes left") {
		t.Errorf("64 KiB per step under Budget{}: %v, %v, %v", err, ans[6].Err, ans[7].Err)
	}
	ans, err = rs.Lookups(lookups(t, append(nine, `{"$ref": "big"}`)...), Budget{Lookups: retain.Unlimited, LookupBytes: retain.Unlimited, StepBytes: retain.Unlimited}, &Spent{})
	if err != nil || ans[9].Err != nil || len(ans[9].Text) != len(big) {
		t.Errorf("Unlimited: %v, %v", err, ans[9].Err)
	}

	// 18 MiB of content passes the 16 MiB default of an empty Expander.
	tmpl := `[{"$ref": "big"}, {"$ref": "big"}]`
	x := &Expander{Store: rs.Store, Run: rs.Run}
	_, err = x.Expand([]byte(tmpl), false)
	if f := refusalOf(err); len(f) != 1 || f[0].Code != retain.CodeTooLarge || !strings.Contains(f[0].Message, "the 16777216-byte bound of one expansion") {
		t.Errorf("Expander{}: %v", err)
	}
	x.MaxBytes = retain.Unlimited
	if r, err := x.Expand([]byte(tmpl), false); err != nil || r.Len() != int64(2*len(big)+len(`["", ""]`)+2*(9<<19)) {
		t.Errorf("Unlimited: %v", err)
	}
}

func refusalOf(err error) []Failure {
	var r *Refusal
	if errors.As(err, &r) {
		return r.Failures
	}
	return nil
}
