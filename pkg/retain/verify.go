package retain

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/retval/retval/internal/xxh3"
	"github.com/retval/retval/pkg/retain/internal/backend"
	format "github.com/retval/retval/pkg/retain/internal/format"
)

// VerifyReport is what Verify checked and found.
type VerifyReport struct {
	Runs int `json:"runs"` // runs checked
	// Refused counts the runs refused as a whole (another user's run
	// directory): each is one corrupt problem, and none of its values was
	// checked.
	Refused  int       `json:"refused"`
	Values   int       `json:"values"`
	Bytes    int64     `json:"bytes"` // value bytes read and hashed (uncompressed)
	Corrupt  int       `json:"corrupt"`
	Missing  int       `json:"missing"`
	Debris   int       `json:"debris"`
	Problems []Problem `json:"problems"`
}

// OK reports whether nothing is corrupt or missing (debris alone is fine:
// gc removes it).
func (r *VerifyReport) OK() bool { return r.Corrupt == 0 && r.Missing == 0 }

// VerifyOptions says what Verify checks.
type VerifyOptions struct {
	// Run limits the check to one run; "" checks every run.
	Run string
	// Grace: a file that belongs to no value and was modified more recently
	// than this may be a write in progress and is not reported as debris.
	// 0 means the default (DefaultLimits().Grace), Unlimited none.
	Grace time.Duration
	// Problem, when set, is called with each problem as it is found.
	Problem func(Problem)
}

// Verify re-reads every value of one run or of the whole store, checking
// its size and SHA-256 against its descriptor (and its index's block
// digests against its bytes), streaming: memory stays bounded whatever the
// sizes. It reports corrupt values, descriptors without content and debris.
// Each run is held while it is checked, so gc leaves it be: in a runs-dir
// its lock, held shared. On object storage nothing holds gc off, and a run
// in which something went missing while it was checked, and which is gone
// or being collected afterwards, was collected meanwhile and is left out,
// as locally. An unknown run is ErrNotFound (ErrCollected when gc removed
// it).
//
// The checks are the same on either backend; each backend adds its own
// physical ones (verifyHold, verifyReads, openForVerify).
func (s *Store) Verify(o VerifyOptions) (*VerifyReport, error) {
	b, err := s.backend()
	if err != nil {
		return nil, err
	}
	o.Grace = Limits{Grace: o.Grace}.Effective().Grace
	runs, err := s.runsToVerify(o.Run, b.MustExist)
	if err != nil {
		return nil, err
	}
	rep := &VerifyReport{Problems: []Problem{}}
	for _, run := range runs {
		err := s.verifyRun(b, run, &o, rep)
		if o.Run == "" && (errors.Is(err, ErrNotFound) || errors.Is(err, ErrCollected)) {
			continue // collected while we worked
		}
		if o.Run == "" && errors.Is(err, ErrCorrupt) {
			// A run refused as a whole (another user's run directory):
			// report it and check the other runs.
			p := Problem{Run: run, File: ".", Kind: ProblemCorrupt, Message: err.Error()}
			rep.Corrupt++
			rep.Refused++
			rep.Problems = append(rep.Problems, p)
			if o.Problem != nil {
				o.Problem(p)
			}
			continue
		}
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// verifyRun checks run into rep. Where the backend holds the run while
// it is checked, each problem is reported as it is found; where it
// cannot, the run's problems are reported once it is checked, and none
// when the run was collected meanwhile.
func (s *Store) verifyRun(b backend.Backend, run ID, o *VerifyOptions, rep *VerifyReport) error {
	release, held, holdProbs, err := b.VerifyHold(run)
	if err != nil {
		return err
	}
	defer release()
	ri, err := b.ScanRunEntries(run)
	if err != nil {
		return err
	}
	var got VerifyReport
	report := func(p Problem) {
		p.Run = run
		switch p.Kind {
		case ProblemCorrupt:
			got.Corrupt++
		case ProblemMissing:
			got.Missing++
		case ProblemDebris:
			got.Debris++
		}
		got.Problems = append(got.Problems, p)
		if held && o.Problem != nil {
			o.Problem(p)
		}
	}
	has := map[string]bool{}
	desc := map[ID]bool{} // values with a descriptor
	for _, e := range ri.Entries {
		has[e.Name] = true
		if e.Kind == KindValue && e.Name == metaName(e.Value) {
			desc[e.Value] = true
		}
	}
	for _, p := range holdProbs {
		report(p)
	}
	committed := b.CommittedIn(ri)
	now := s.now()
	readLog := false
	for _, e := range ri.Entries {
		switch {
		case isReadLog(e.Name):
			// The read log, one file or one object per record, is
			// checked once, where it is listed.
			if !readLog {
				readLog = true
				if p, ok := b.VerifyReads(ri, e); ok {
					report(p)
				}
			}
		case e.Kind == KindValue && e.Name == metaName(e.Value):
			got.Values++
			for _, p := range verifyValue(b, committed, run, e.Value, has[linesName(e.Value)], &got.Bytes) {
				report(p)
			}
		case e.Special != 0 && (e.Name == metaName(valueOfName(e.Name)) || !desc[valueOfName(e.Name)]):
			// (A special content or index file of a value is reported
			// with the value, below.)
			report(Problem{File: e.Name, Kind: ProblemCorrupt, Message: fmt.Sprintf("a %s where a value's file belongs: retval never writes one (remove it; gc removes it as a stray)", specialName(e.Special))})
		case e.Kind.Debris() && now.Sub(e.ModTime) >= o.Grace:
			report(Problem{File: e.Name, Kind: ProblemDebris, Message: debrisWhy(e, desc[e.Value]), Bytes: e.Bytes})
		}
	}
	if !held && len(got.Problems) > 0 && b.CollectedSince(run) {
		return nil
	}
	rep.Runs++
	rep.Values += got.Values
	rep.Bytes += got.Bytes
	rep.Corrupt += got.Corrupt
	rep.Missing += got.Missing
	rep.Debris += got.Debris
	rep.Problems = append(rep.Problems, got.Problems...)
	if !held && o.Problem != nil {
		for _, p := range got.Problems {
			o.Problem(p)
		}
	}
	return nil
}

func debrisWhy(e RunEntry, hasDesc bool) string {
	switch {
	case e.Kind == KindTemp:
		return "temporary file of an unfinished write"
	case e.Kind == KindOrphan && hasDesc:
		return fmt.Sprintf("content file that %s does not name", metaName(e.Value))
	case e.Kind == KindOrphan && e.Name == linesName(e.Value):
		return fmt.Sprintf("line index without a descriptor (no %s)", metaName(e.Value))
	case e.Kind == KindOrphan:
		return fmt.Sprintf("content without a descriptor (no %s)", metaName(e.Value))
	}
	if e.IsDir {
		return "directory that retval does not write"
	}
	return "file that retval does not write"
}

// verifyValue checks value id of run and returns what is wrong with it;
// committed is the one rule, as the backend applies it to the run's
// listing. bytes accumulates what was hashed.
func verifyValue(b backend.Backend, committed func(ID) (*Descriptor, *valueProblem), run, id ID, hasIndex bool, bytes *int64) []Problem {
	// First the rule every listing counts by; then what only verify does:
	// open the content (re-checking it, as it may have changed since),
	// its index, and every byte against the digests.
	d, prob := committed(id)
	if prob != nil {
		return []Problem{prob.Problem()}
	}
	name := contentName(id, d.Compression)
	bad := func(format string, args ...any) []Problem {
		return []Problem{{File: name, Kind: ProblemCorrupt, Message: fmt.Sprintf(format, args...)}}
	}
	c, prob := b.OpenForVerify(run, d)
	if prob != nil {
		return []Problem{prob.Problem()}
	}
	defer c.Close()

	var ix *Index
	var probs []Problem
	if hasIndex {
		var err error
		ix, err = b.ReadIndex(run, d)
		if err != nil {
			probs = append(probs, Problem{File: linesName(id), Kind: ProblemCorrupt, Message: fmt.Sprintf("line index unusable: %v", err)})
			ix = nil
		}
	}

	var r io.Reader
	if d.Compression == CompressZstd {
		// The same seek-table checks and bounded frame decoding as every
		// read: a frame that inflates past the descriptor is corrupt.
		zr, err := openZstd(c.At, d)
		if err != nil {
			return append(probs, bad("%v", err)...)
		}
		defer zr.close()
		r = io.NewSectionReader(zr, 0, d.Size)
	} else {
		// One byte past the descriptor's size tells a longer content apart.
		r = io.LimitReader(c.R, d.Size+1)
	}
	return append(probs, checkContent(id, d, ix, r, bytes, bad)...)
}

// isReadLog reports whether a run's entry is its read log: the file
// .reads, or one of its records under .reads/ on object storage.
func isReadLog(name string) bool {
	return name == readsName || strings.HasPrefix(name, format.ReadsDir)
}

// runsToVerify is the run typed names, which exist must find there (its
// error names the run as typed), or every run of the store when typed is
// empty.
func (s *Store) runsToVerify(typed string, exist func(ID) error) ([]ID, error) {
	if typed == "" {
		return s.RunIDs()
	}
	id, err := Sanitize(typed)
	if err != nil {
		return nil, Errorf(CodeUsage, "run id: %v", err)
	}
	if err := exist(id); err != nil {
		return nil, asTyped(err, typed)
	}
	return []ID{id}, nil
}

// checkContent hashes r, the uncompressed bytes of value id, against its
// descriptor d and the block digests of its index ix (nil: none): what
// verify checks of every value, in a runs-dir or on object storage.
// bytes counts what was read; bad makes the content's problem.
func checkContent(id ID, d *Descriptor, ix *Index, r io.Reader, bytes *int64, bad func(format string, args ...any) []Problem) []Problem {
	h := sha256.New()
	bh := &blockHasher{h: xxh3.New()}
	w := io.Writer(h)
	if ix != nil {
		w = io.MultiWriter(h, bh)
	}
	n, err := io.Copy(w, r)
	*bytes += n
	if err != nil {
		return bad("reading content: %v", err)
	}
	if n != d.Size {
		return bad("content holds %d bytes, descriptor says %d", n, d.Size)
	}
	if hex.EncodeToString(h.Sum(nil)) != d.SHA256 {
		return bad("sha256 does not match the descriptor")
	}
	if ix != nil {
		bh.finish()
		for i, sum := range bh.sums {
			if i >= len(ix.Blocks) || ix.Blocks[i] != sum {
				return []Problem{{File: linesName(id), Kind: ProblemCorrupt,
					Message: fmt.Sprintf("block %d digest does not match the content (slice reads would fail)", i)}}
			}
		}
	}
	return nil
}

// blockHasher computes the XXH3-64 of each BlockSize block written to it.
type blockHasher struct {
	h    *xxh3.Hasher
	n    int
	sums []uint64
}

func (b *blockHasher) Write(p []byte) (int, error) {
	total := len(p)
	for len(p) > 0 {
		k := min(len(p), BlockSize-b.n)
		b.h.Write(p[:k])
		b.n += k
		p = p[k:]
		if b.n == BlockSize {
			b.sums = append(b.sums, b.h.Sum64())
			b.h.Reset()
			b.n = 0
		}
	}
	return total, nil
}

func (b *blockHasher) finish() {
	if b.n > 0 {
		b.sums = append(b.sums, b.h.Sum64())
	}
}

func valueOfName(name string) ID {
	id, _ := valueOf(name)
	return id
}

func specialName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "device"
}
