package expand

import "github.com/retval/retval/pkg/retain"

// The read log: every lookup a Resolver answers, failed ones included, and
// every call the budget refuses is recorded in the run's read log; every
// expansion records the bytes it composed from each value.

// via is what the read log names as the reader.
func (rs *Resolver) via() string {
	if rs.Via == "" {
		return "resolve"
	}
	return rs.Via
}

// logLookups records one call's lookups (the first opens the call) or,
// when the call was refused, its refusal.
func (rs *Resolver) logLookups(step string, calls []Lookup, answers []Answer, refused error) {
	if rs.Store == nil {
		return
	}
	run, err := retain.Sanitize(rs.Run)
	if err != nil {
		return
	}
	sid, _ := retain.Sanitize(step)
	if step == "" {
		sid = ""
	}
	if refused != nil {
		rs.Store.LogRead(run, retain.Read{Op: retain.OpRefused, Via: rs.via(), Step: sid, Call: true,
			Bytes: int64(len(refused.Error())), Code: retain.CodeOf(refused)})
		return
	}
	for i, a := range answers {
		r := retain.Read{Op: retain.OpRead, Via: rs.via(), Step: sid, Call: i == 0, Bytes: int64(len(a.Text))}
		if c := calls[i]; c.Err == nil {
			r.Sel = c.Ref.Selector()
			if c.Ref.Kind != RefList {
				r.Value, _ = retain.Sanitize(valueID(c.Ref.ID))
			}
		}
		if a.Err != nil {
			r.Code, r.Bytes = retain.CodeOf(a.Err), int64(len(a.Err.Error()))
		}
		rs.Store.LogRead(run, r)
	}
}

// logComposed records the bytes an expansion took from each value.
func (x *Expander) logComposed(composed map[string]int64) {
	run, err := retain.Sanitize(x.Run)
	if err != nil || x.Store == nil {
		return
	}
	for id, n := range composed {
		vid, err := retain.Sanitize(valueID(id))
		if err != nil {
			continue
		}
		x.Store.LogRead(run, retain.Read{Op: retain.OpCompose, Via: "expand", Value: vid, Bytes: n})
	}
}
