package retain

import (
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/retval/retval/pkg/retain/s3store"
)

// objVerify is Verify on object storage: every value of a run re-read by
// one streaming GET (a compressed one through its seek table, as every
// read), checked against its descriptor's size and SHA-256 and its index's
// block digests. There is no lock to hold gc off: a run in which something
// went missing while it was checked, and which is gone or being collected
// afterwards, was collected meanwhile and is left out, as locally.
func (o *objStore) verify(s *Store, opt VerifyOptions) (*VerifyReport, error) {
	opt.Grace = Limits{Grace: opt.Grace}.Effective().Grace
	runs, err := s.runsToVerify(opt.Run, func(id ID) error { return o.mustExist(s, id) })
	if err != nil {
		return nil, err
	}
	rep := &VerifyReport{Problems: []Problem{}}
	for _, run := range runs {
		ri, err := o.scanRunEntries(s, run)
		if opt.Run == "" && (errors.Is(err, ErrNotFound) || errors.Is(err, ErrCollected)) {
			continue // collected while we worked
		}
		if err != nil {
			return rep, err
		}
		var got VerifyReport
		o.verifyRun(s, ri, &opt, &got)
		if len(got.Problems) > 0 && o.collectedSince(run) {
			continue
		}
		rep.Runs++
		rep.Values += got.Values
		rep.Bytes += got.Bytes
		rep.Corrupt += got.Corrupt
		rep.Missing += got.Missing
		rep.Debris += got.Debris
		for _, p := range got.Problems {
			rep.Problems = append(rep.Problems, p)
			if opt.Problem != nil {
				opt.Problem(p)
			}
		}
	}
	return rep, nil
}

// collectedSince reports whether gc is collecting run, or has.
func (o *objStore) collectedSince(run ID) bool {
	if _, err := o.b.Stat(o.ctx, collectingKey(run)); err == nil {
		return true
	}
	ok, err := o.runExists(run)
	return err == nil && !ok
}

func (o *objStore) verifyRun(s *Store, ri *RunInfo, opt *VerifyOptions, rep *VerifyReport) {
	report := func(p Problem) {
		p.Run = ri.Run
		switch p.Kind {
		case ProblemCorrupt:
			rep.Corrupt++
		case ProblemMissing:
			rep.Missing++
		case ProblemDebris:
			rep.Debris++
		}
		rep.Problems = append(rep.Problems, p)
	}
	objs := entryObjects(ri)
	desc := map[ID]bool{}
	for _, e := range ri.Entries {
		if e.Kind == KindValue && e.Name == metaName(e.Value) {
			desc[e.Value] = true
		}
	}
	now := s.now()
	reads := false
	for _, e := range ri.Entries {
		switch {
		case strings.HasPrefix(e.Name, readsDir):
			reads = true
		case e.Kind == KindValue && e.Name == metaName(e.Value):
			rep.Values++
			_, hasIndex := objs[linesName(e.Value)]
			for _, p := range o.verifyValue(ri.Run, e.Value, objs, hasIndex, &rep.Bytes) {
				report(p)
			}
		case e.Kind.Debris() && now.Sub(e.ModTime) >= opt.Grace:
			report(Problem{File: e.Name, Kind: ProblemDebris, Message: debrisWhy(e, desc[e.Value]), Bytes: e.Bytes})
		}
	}
	if reads {
		if p, ok := o.verifyReads(s, ri.Run); ok {
			report(p)
		}
	}
}

// verifyReads is verifyReads on object storage: every record of the read
// log (an object under .reads/) is one well-formed record.
func (o *objStore) verifyReads(s *Store, run ID) (Problem, bool) {
	p := Problem{File: readsDir, Kind: ProblemCorrupt}
	var first string
	info, err := o.scanReads(s, run, func(*Read) {}, func(key string) {
		if first == "" {
			first = key
		}
	})
	switch {
	case errors.Is(err, ErrNotFound) || errors.Is(err, ErrCollected):
		return p, false // collected meanwhile: the caller leaves the run out
	case err != nil:
		p.Message = fmt.Sprintf("read log unreadable: %v", err)
	case info.Malformed > 0:
		p.Message = fmt.Sprintf("the read log has %d objects that are not records (the first is %s): stats skips them; delete them to drop them", info.Malformed, path.Base(first))
	default:
		return p, false
	}
	return p, true
}

// verifyValue is verifyValue on object storage.
func (o *objStore) verifyValue(run, id ID, objs map[string]s3store.Object, hasIndex bool, bytes *int64) []Problem {
	d, prob := o.objCommitted(run, id, objs)
	if prob != nil {
		return []Problem{prob.problem()}
	}
	meta, name := metaName(id), contentName(id, d.Compression)
	key := objKey(run, name)
	bad := func(format string, args ...any) []Problem {
		return []Problem{{File: name, Kind: ProblemCorrupt, Message: fmt.Sprintf(format, args...)}}
	}
	missing := func() []Problem {
		return []Problem{{File: name, Kind: ProblemMissing, Message: fmt.Sprintf("content file missing: %s has no %s", meta, name)}}
	}

	var ix *Index
	var probs []Problem
	if hasIndex {
		b, _, err := o.b.Get(o.ctx, objKey(run, linesName(id)), maxIndexSize)
		if err == nil {
			ix, err = parseIndex(b, d)
		}
		if err != nil {
			probs = append(probs, Problem{File: linesName(id), Kind: ProblemCorrupt, Message: fmt.Sprintf("line index unusable: %v", err)})
			ix = nil
		}
	}

	var r io.Reader
	if d.Compression == CompressZstd {
		st, err := o.b.Stat(o.ctx, key)
		switch {
		case errors.Is(err, s3store.ErrNotFound):
			return append(probs, missing()...)
		case err != nil:
			return append(probs, bad("cannot open content: %v", err)...)
		case st.Size != d.StoredBytes:
			return append(probs, bad("content file holds %d bytes, descriptor says %d", st.Size, d.StoredBytes)...)
		}
		zr, err := openZstd(newObjReaderAt(o, key, st.Size), d)
		if err != nil {
			return append(probs, bad("%v", err)...)
		}
		defer zr.close()
		r = io.NewSectionReader(zr, 0, d.Size)
	} else {
		body, st, err := o.b.Open(o.ctx, key)
		switch {
		case errors.Is(err, s3store.ErrNotFound):
			return append(probs, missing()...)
		case err != nil:
			return append(probs, bad("cannot open content: %v", err)...)
		}
		defer body.Close()
		if st.Size != d.StoredBytes {
			return append(probs, bad("content file holds %d bytes, descriptor says %d", st.Size, d.StoredBytes)...)
		}
		// One byte past the descriptor's size tells a longer body apart.
		r = io.LimitReader(body, d.Size+1)
	}
	return append(probs, checkContent(id, d, ix, r, bytes, bad)...)
}

// orVerify is err when the backend could not be opened, else f's result.
func orVerify(err error, f func() (*VerifyReport, error)) (*VerifyReport, error) {
	if err != nil {
		return nil, err
	}
	return f()
}
