package retain

// LogSelection is LogCall for a lookup that says what it selected: sel,
// in the flag form of peek and resolve (see Read.Sel), is kept in the
// record so that a reader of the log (retval ui) can show which lines
// the call read back.
func (s *Store) LogSelection(run, id, via, sel string, n int64, err error) {
	rid, rerr := Sanitize(run)
	if rerr != nil {
		return
	}
	r := callRead(id, via, n, err)
	r.Sel = sel
	s.LogRead(rid, r)
}
