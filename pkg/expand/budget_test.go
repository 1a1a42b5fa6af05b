package expand

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retval/retval/internal/jsonstr"
	"github.com/retval/retval/pkg/retain"
)

func lookups(t testing.TB, refs ...string) []Lookup {
	var out []Lookup
	for _, r := range refs {
		ref, err := ParseRef([]byte(r))
		out = append(out, Lookup{Ref: ref, Err: err})
	}
	return out
}

var defaultBudget = BudgetOf(retain.DefaultLimits())

func TestBudgetDefaults(t *testing.T) {
	if defaultBudget != (Budget{Lookups: 8, LookupBytes: 8 << 10, StepBytes: 64 << 10}) {
		t.Fatalf("%+v", defaultBudget)
	}
}

func TestLookupsCount(t *testing.T) {
	rs := newStore(t, testValues)
	nine := make([]string, 9)
	for i := range nine {
		nine[i] = `{"$ref": "nl"}`
	}
	var sp Spent
	ans, err := rs.Lookups(lookups(t, nine...), defaultBudget, &sp)
	if retain.CodeOf(err) != retain.CodeBudgetExhausted || ans != nil || sp != (Spent{}) {
		t.Fatalf("9 lookups: %v, %v, spent %+v", ans, err, sp)
	}
	if !strings.Contains(err.Error(), "this call asks for 9 lookups but a step allows 8") {
		t.Fatal(err)
	}
	// Failed and too-large lookups count; answered ones spend escaped bytes.
	ans, err = rs.Lookups(lookups(t, `{"$ref": "nl"}`, `{"$ref": "nope"}`, `{"$ref": "nl", "x": 1}`, `{"$ref": "long"}`), defaultBudget, &sp)
	if err != nil || len(ans) != 4 {
		t.Fatal(ans, err)
	}
	if string(ans[0].Text) != "a\nb\n" || retain.CodeOf(ans[1].Err) != retain.CodeUnknownReference ||
		retain.CodeOf(ans[2].Err) != retain.CodeBadReference || retain.CodeOf(ans[3].Err) != retain.CodeTooLarge {
		t.Fatalf("%+v", ans)
	}
	if sp != (Spent{Lookups: 4, Bytes: 6}) { // "a\nb\n" escapes to 6 bytes
		t.Fatalf("spent %+v", sp)
	}
	// 4 left: 5 is refused whole, 4 is answered.
	if _, err := rs.Lookups(lookups(t, nine[:5]...), defaultBudget, &sp); retain.CodeOf(err) != retain.CodeBudgetExhausted || sp.Lookups != 4 {
		t.Fatal(err, sp)
	}
	if ans, err := rs.Lookups(lookups(t, nine[:4]...), defaultBudget, &sp); err != nil || len(ans) != 4 || sp.Lookups != 8 {
		t.Fatal(err, sp)
	}
	// Unlimited is no bound; zero is the default.
	var sp2 Spent
	if ans, err := rs.Lookups(lookups(t, nine...), Budget{Lookups: retain.Unlimited}, &sp2); err != nil || len(ans) != 9 {
		t.Fatal(err)
	}
	if _, err := rs.Lookups(lookups(t, nine...), Budget{}, &Spent{}); retain.CodeOf(err) != retain.CodeBudgetExhausted {
		t.Fatal(err)
	}
}

// The step's byte bound is measured after JSON escaping: a result that
// escapes past what is left fails with too_large, and still counts.
func TestLookupsStepBytes(t *testing.T) {
	v := strings.Repeat("\"\n", 1000) // 2000 raw bytes, 4000 escaped
	rs := newStore(t, map[string]string{"q": v, "p": "plain"})
	if n := jsonstr.Len([]byte(v)); n != 4000 {
		t.Fatal(n)
	}
	b := Budget{Lookups: 8, LookupBytes: 8192, StepBytes: 9000}
	var sp Spent
	ans, err := rs.Lookups(lookups(t, `{"$ref": "q"}`, `{"$ref": "q"}`, `{"$ref": "q"}`, `{"$ref": "p"}`), b, &sp)
	if err != nil {
		t.Fatal(err)
	}
	if ans[0].Err != nil || ans[1].Err != nil || retain.CodeOf(ans[2].Err) != retain.CodeTooLarge || string(ans[3].Text) != "plain" {
		t.Fatalf("%v %v %v %v", ans[0].Err, ans[1].Err, ans[2].Err, ans[3].Err)
	}
	if !strings.Contains(ans[2].Err.Error(), "the result is 4000 bytes after JSON escaping, but the step has 1000 of its 9000 bytes left") {
		t.Fatal(ans[2].Err)
	}
	if sp != (Spent{Lookups: 4, Bytes: 8005}) {
		t.Fatalf("%+v", sp)
	}
}

func TestListResults(t *testing.T) {
	rs := newStore(t, testValues)
	var sp Spent
	ans, err := rs.Lookups(lookups(t, `{"$list_results": 0}`, `{"$list_results": 5}`, `{"$list_results": 9}`), defaultBudget, &sp)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := rs.Store.Values("r")
	if err != nil {
		t.Fatal(err)
	}
	// Compact entries, in the catalogue's order, from the value asked for.
	for i, from := range []int{0, 5, 9} {
		var want strings.Builder
		fmt.Fprintf(&want, `{"run":"r","page":%d,"total":%d,"next":null,"values":[`, from, len(vals))
		for j, d := range vals[min(from, len(vals)):] {
			if j > 0 {
				want.WriteByte(',')
			}
			fmt.Fprintf(&want, `{"id":%q,"size":%d,"lines":%d,"complete":%v,"created":%q,"sha256":%q}`,
				d.ID, d.Size, d.Lines, d.Complete, d.Created.Format(time.RFC3339Nano), d.SHA256)
		}
		want.WriteString("]}")
		if ans[i].Err != nil || string(ans[i].Text) != want.String() {
			t.Fatalf("from %d: %s, %v; want %s", from, ans[i].Text, ans[i].Err, want.String())
		}
	}
	if sp.Lookups != 3 {
		t.Fatal(sp)
	}
	// When not even one entry fits, the lookup is too_large, and says what
	// to do.
	ans, _ = rs.Lookups(lookups(t, `{"$list_results": 0}`), Budget{LookupBytes: 100}, &sp)
	if retain.CodeOf(ans[0].Err) != retain.CodeTooLarge || !strings.Contains(ans[0].Err.Error(), "raise --max-lookup-bytes, or list it with: retval catalogue --run r --page 0 --page-size 1") {
		t.Fatal(ans[0].Err)
	}
}

func TestLookupsAsValueRefused(t *testing.T) {
	rs := newStore(t, testValues)
	ans, err := rs.Lookups(lookups(t, `{"$ref": "json", "pointer": "/a", "as": "value"}`), defaultBudget, &Spent{})
	if err != nil || retain.CodeOf(ans[0].Err) != retain.CodeBadReference {
		t.Fatal(ans, err)
	}
}

func TestStepLedger(t *testing.T) {
	rs := newStore(t, testValues)
	five := lookups(t, `{"$ref": "nl"}`, `{"$ref": "nl"}`, `{"$ref": "nope"}`, `{"$ref": "nl"}`, `{"$ref": "nl"}`)
	if _, err := rs.Step("s1", five, defaultBudget); err != nil {
		t.Fatal(err)
	}
	_, err := rs.Step("s1", five[:4], defaultBudget)
	if retain.CodeOf(err) != retain.CodeBudgetExhausted || !strings.Contains(err.Error(), `step "s1" has 3 of its 8 lookups left and this call asks for 4`) {
		t.Fatal(err)
	}
	if _, err := rs.Step("s1", five[:3], defaultBudget); err != nil {
		t.Fatal(err)
	}
	sp, err := rs.StepSpent("s1")
	if err != nil || sp != (Spent{Lookups: 8, Bytes: 6 * 6}) {
		t.Fatal(sp, err)
	}
	// Another step has its own budget.
	if _, err := rs.Step("s2", five, defaultBudget); err != nil {
		t.Fatal(err)
	}
	// The ledger: a fixed-size record in .steps/<sanitized id>.json.
	dir := filepath.Join(rs.Store.RunDir("r"), ".steps")
	b, err := os.ReadFile(filepath.Join(dir, "s1.json"))
	if err != nil || len(b) != 256 { // SPEC §1: a fixed-size record
		t.Fatal(len(b), err)
	}
	var rec map[string]any
	if err := json.Unmarshal(b, &rec); err != nil || rec["lookups"] != 8.0 || rec["step"] != "s1" {
		t.Fatal(rec, err)
	}
	odd, _ := retain.Sanitize("../x")
	if _, err := rs.Step("../x", five[:1], defaultBudget); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, string(odd)+".json")); err != nil {
		t.Fatal(err)
	}
	// A ledger that cannot be read is corrupt, never silently reset.
	os.WriteFile(filepath.Join(dir, "s3.json"), []byte("{garbage"), 0o600)
	if _, err := rs.Step("s3", five[:1], defaultBudget); !errors.Is(err, retain.ErrCorrupt) {
		t.Fatal(err)
	}
	// A step of an unknown run fails before anything.
	rs2 := &Resolver{Store: rs.Store, Run: "other"}
	if _, err := rs2.Step("s1", five[:1], defaultBudget); !errors.Is(err, retain.ErrNotFound) {
		t.Fatal(err)
	}
	if _, err := rs.Step("", five[:1], defaultBudget); retain.CodeOf(err) != retain.CodeUsage {
		t.Fatal(err)
	}
}

// Concurrent calls of one step never overspend: each takes the ledger's
// lock, so exactly the budget is answered.
func TestStepConcurrent(t *testing.T) {
	rs := newStore(t, testValues)
	var wg sync.WaitGroup
	var mu sync.Mutex
	answered, refused := 0, 0
	for range 20 {
		wg.Go(func() {
			_, err := rs.Step("par", lookups(t, `{"$ref": "nl"}`), defaultBudget)
			mu.Lock()
			defer mu.Unlock()
			switch retain.CodeOf(err) {
			case retain.CodeBudgetExhausted:
				refused++
			default:
				if err != nil {
					t.Error(err)
				}
				answered++
			}
		})
	}
	wg.Wait()
	if answered != 8 || refused != 12 {
		t.Fatalf("answered %d, refused %d", answered, refused)
	}
}

func TestAnswerJSON(t *testing.T) {
	b, _ := Answer{Text: []byte("a\"<\n")}.MarshalJSON()
	if string(b) != `{"ok":true,"text":"a\"<\n","bytes":4,"sha256":"`+digest("a\"<\n")+`"}` {
		t.Fatal(string(b))
	}
	b, _ = Answer{Err: retain.Errorf(retain.CodeTooLarge, "too <big>")}.MarshalJSON()
	if string(b) != `{"ok":false,"error":{"code":"too_large","message":"too <big>"}}` {
		t.Fatal(string(b))
	}
}
