package expand

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/retval/retval/internal/jsonstr"
	"github.com/retval/retval/pkg/retain"
)

// Budget bounds the lookups of one step. A zero field means SPEC's
// default (retain.DefaultLimits: 8 lookups, 8 KiB, 64 KiB), so Budget{} is
// the default budget; retain.Unlimited (any negative value) means no
// bound.
type Budget struct {
	Lookups     int64 // lookups per step
	LookupBytes int64 // raw bytes of one lookup's result
	StepBytes   int64 // bytes of all results of the step, after JSON escaping
}

// BudgetOf returns the budget the limits set (their zero fields and
// Unlimited mean what they mean in a Budget).
func BudgetOf(l retain.Limits) Budget {
	return Budget{Lookups: l.MaxLookups, LookupBytes: l.MaxLookupBytes, StepBytes: l.MaxStepBytes}
}

// bounds is a Budget as it is enforced: defaults applied, 0 meaning no
// bound. A type of its own, so that it is never taken for a Budget.
type bounds struct{ lookups, lookupBytes, stepBytes int64 }

func (b Budget) bounds() bounds {
	e := retain.Limits{MaxLookups: b.Lookups, MaxLookupBytes: b.LookupBytes, MaxStepBytes: b.StepBytes}.Effective()
	return bounds{lookups: e.MaxLookups, lookupBytes: e.MaxLookupBytes, stepBytes: e.MaxStepBytes}
}

// Spent is what a step has used of its budget (the record of its ledger).
type Spent = retain.StepSpent

// Lookup is one reference of a call: parsed, or the error parsing it gave.
// A reference that did not parse is answered with that error and counts.
type Lookup struct {
	Ref Ref
	Err error
}

// Answer is the result of one lookup: Text, or Err.
type Answer struct {
	Text []byte
	Err  error
}

// Lookups answers one call of lookups in a step that has spent so far, and
// adds what they use to spent. Every lookup counts, answered or failed. A
// result over a byte bound is answered with a too_large error. A call
// whose lookups would pass the step's count is refused whole: nothing is
// answered or spent, and the error is budget_exhausted.
//
// Every lookup, answered or failed, and a refusal are recorded in the
// run's read log.
func (rs *Resolver) Lookups(calls []Lookup, b Budget, spent *Spent) ([]Answer, error) {
	answers, err := rs.lookups(calls, b.bounds(), spent, "")
	rs.logLookups("", calls, answers, budgetRefusal(err))
	return answers, err
}

// budgetRefusal is err when it refused a call for the budget, else nil.
func budgetRefusal(err error) error {
	if retain.CodeOf(err) == retain.CodeBudgetExhausted {
		return err
	}
	return nil
}

func (rs *Resolver) lookups(calls []Lookup, b bounds, spent *Spent, step string) ([]Answer, error) {
	if b.lookups > 0 && spent.Lookups+int64(len(calls)) > b.lookups {
		if step == "" {
			return nil, retain.Errorf(retain.CodeBudgetExhausted, "this call asks for %d lookups but a step allows %d; ask for at most %d", len(calls), b.lookups, b.lookups)
		}
		left := max(0, b.lookups-spent.Lookups)
		return nil, retain.Errorf(retain.CodeBudgetExhausted, "step %q has %d of its %d lookups left and this call asks for %d; nothing was looked up: ask for fewer, or work with what the step has read", step, left, b.lookups, len(calls))
	}
	out := make([]Answer, len(calls))
	for i, c := range calls {
		spent.Lookups++
		if c.Err != nil {
			out[i].Err = c.Err
			continue
		}
		text, err := rs.answer(c.Ref, b)
		if err == nil && b.stepBytes > 0 {
			if n := jsonstr.Len(text); spent.Bytes+n > b.stepBytes {
				err = retain.Errorf(retain.CodeTooLarge, "the result is %d bytes after JSON escaping, but the step has %d of its %d bytes left; narrow the selection", n, max(0, b.stepBytes-spent.Bytes), b.stepBytes)
			}
		}
		if err != nil {
			out[i].Err = err
			continue
		}
		spent.Bytes += jsonstr.Len(text)
		out[i].Text = text
	}
	return out, nil
}

// answer performs one lookup within the per-lookup bound.
func (rs *Resolver) answer(r Ref, b bounds) ([]byte, error) {
	if r.Kind == RefList {
		return rs.list(r.Page, b.lookupBytes)
	}
	if r.Kind == RefOutline {
		return rs.outline(r, b.lookupBytes)
	}
	if r.As == AsValue {
		return nil, badRef("\"as\": \"value\" is for expand templates; resolve returns the lexeme, so use \"lexeme\"")
	}
	s, err := rs.Open(r)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if rs.Raw {
		return s.Text(b.lookupBytes)
	}
	return s.JSONText(b.lookupBytes)
}

// Step answers one call of lookups in the named step, whose spending is
// kept in the ledger .steps/<step>.json of the run directory, so a budget
// holds across processes. The ledger is read and written under the run's
// lock (held shared, so gc leaves the run alone) and an exclusive lock on
// the ledger itself, so concurrent calls never overspend; it is written,
// and synced, before any answer is returned.
//
// On object storage there are no locks: the ledger is saved by
// compare-and-swap, and a call that lost the race to another process
// reads the ledger again and decides again (lookups only read), so
// exactly the budget is answered however many processes spend one step.
//
// On a store that cannot be written (a read-only mount or snapshot) the
// step is counted for this call alone, starting from what its ledger
// recorded, and StepInMemory is told: nothing can be carried to the
// next call, and refusing every lookup would leave a snapshot unreadable
// to the harnesses that pass a step.
func (rs *Resolver) Step(step string, calls []Lookup, b Budget) ([]Answer, error) {
	for {
		answers, err := rs.step(step, calls, b)
		if !errors.Is(err, retain.ErrLedgerChanged) {
			return answers, err
		}
	}
}

func (rs *Resolver) step(step string, calls []Lookup, b Budget) ([]Answer, error) {
	l, err := rs.openLedger(step)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	if why := l.InMemory(); why != nil && rs.StepInMemory != nil {
		rs.StepInMemory(string(l.Step()), why)
	}
	spent := l.Spent()
	answers, err := rs.lookups(calls, b.bounds(), &spent, string(l.Step()))
	if err != nil {
		rs.logLookups(step, calls, nil, budgetRefusal(err))
		return nil, err
	}
	if err := l.Save(spent); err != nil {
		return nil, err
	}
	rs.logLookups(step, calls, answers, nil)
	return answers, nil
}

// StepSpent returns what step has spent so far (zero for a new step).
func (rs *Resolver) StepSpent(step string) (Spent, error) {
	l, err := rs.openLedger(step)
	if err != nil {
		return Spent{}, err
	}
	defer l.Close()
	return l.Spent(), nil
}

// openLedger opens the run's ledger of step (retain keeps the ledger:
// its file, locks and record; expand only does the arithmetic).
func (rs *Resolver) openLedger(step string) (*retain.StepLedger, error) {
	run, err := retain.Sanitize(rs.Run)
	if err != nil {
		return nil, retain.Errorf(retain.CodeUsage, "run id: %v", err)
	}
	sid, err := retain.Sanitize(step)
	if err != nil {
		return nil, retain.Errorf(retain.CodeUsage, "step id: %v", err)
	}
	return rs.Store.OpenStepLedger(run, sid)
}

// MarshalJSON renders an answer as resolve's --json and --batch print it:
// {"ok": true, "text": ..., "bytes": N, "sha256": ...} with the digest of
// the text, or {"ok": false, "error": {"code": ..., "message": ...}}. A
// text that is not valid UTF-8 (an answer of a Raw Resolver) is rendered
// as the not_utf8 error it is in JSON, never with substituted bytes.
func (a Answer) MarshalJSON() ([]byte, error) {
	if a.Err == nil && !utf8.Valid(a.Text) {
		a.Err = checkUTF8("", 0, a.Text)
		if e := (*NotUTF8Error)(nil); errors.As(a.Err, &e) {
			a.Err = retain.Errorf(retain.CodeNotUTF8, "the text is not valid UTF-8 at its byte %d (0x%02x), and a JSON string cannot carry it; select bytes that leave it out", e.Offset, e.Byte)
		}
	}
	if a.Err != nil {
		b := fmt.Appendf(nil, `{"ok":false,"error":{"code":"%s","message":"`, retain.CodeOf(a.Err))
		b = jsonstr.Append(b, []byte(a.Err.Error()))
		return append(b, `"}}`...), nil
	}
	sum := sha256.Sum256(a.Text)
	b := []byte(`{"ok":true,"text":"`)
	b = jsonstr.Append(b, a.Text)
	b = fmt.Appendf(b, `","bytes":%d,"sha256":"%s"}`, len(a.Text), hex.EncodeToString(sum[:]))
	return b, nil
}
