package crash

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
)

// Sector is the unit in which the ordered model lets the last write
// persist partly.
const Sector = 512

// State is one crash state: the operations that persisted, applied in
// recorded order to the file system the recording began from.
type State struct {
	Crash    int   // operations [0, Crash) were issued before the crash
	Kept     []int // indices of the operations that persisted
	Partial  int   // when ≥ 0, the byte count of Kept's last write that persisted
	Promised int   // promise points (stdout writes) before the crash
	// Drawn is set for a state the weak model drew at random, as opposed
	// to one it built on purpose (an extreme, or all but one operation).
	Drawn bool
}

// Describe names the state for a report: crash point and what was dropped.
func (s *State) Describe(ops []Op) string {
	kept := map[int]bool{}
	for _, k := range s.Kept {
		kept[k] = true
	}
	var lost []string
	for i := 0; i < s.Crash; i++ {
		if !kept[i] && ops[i].Kind != OpFsync && ops[i].Kind != OpPromise {
			lost = append(lost, fmt.Sprintf("#%d %s", i, ops[i].String()))
		}
	}
	d := fmt.Sprintf("crash after op %d of %d", s.Crash, len(ops))
	if s.Partial >= 0 {
		d += fmt.Sprintf(", last write cut to %d bytes", s.Partial)
	}
	if len(lost) > 0 {
		d += "; not persisted: " + strings.Join(lost, ", ")
	}
	return d
}

// Build applies the state to a copy of before.
func (s *State) Build(before *FS, ops []Op) *FS {
	fs := before.clone()
	for i, k := range s.Kept {
		op := ops[k]
		if i == len(s.Kept)-1 && s.Partial >= 0 && op.Kind == OpWrite {
			cut := op
			cut.Data = op.Data[:s.Partial]
			op = cut
		}
		fs.apply(&op)
	}
	return fs
}

func promisedBefore(ops []Op, c int) int {
	n := 0
	for _, op := range ops[:c] {
		if op.Kind == OpPromise {
			n++
		}
	}
	return n
}

// Ordered returns the states of the ordered model (ext4 data=ordered, as
// the issue states it): any prefix of the operations persists, and the
// last write of a prefix may persist only in its first sectors. Writes
// longer than cuts sectors are cut at cuts points spread over them.
func Ordered(ops []Op, cuts int) []State {
	var out []State
	for c := 0; c <= len(ops); c++ {
		kept := make([]int, c)
		for i := range kept {
			kept[i] = i
		}
		out = append(out, State{Crash: c, Kept: kept, Partial: -1, Promised: promisedBefore(ops, c)})
		if c == 0 || ops[c-1].Kind != OpWrite {
			continue
		}
		n := len(ops[c-1].Data)
		sectors := (n - 1) / Sector // whole-sector cuts strictly inside the write
		for j := 0; j < sectors && j < cuts; j++ {
			s := j
			if sectors > cuts {
				s = j * sectors / cuts
			}
			out = append(out, State{Crash: c, Kept: kept, Partial: s * Sector, Promised: promisedBefore(ops, c-1)})
		}
	}
	return out
}

// keys are the persistence domains an operation belongs to: a file's data
// ("f" + inode) or a directory's entries ("d" + inode).
func keys(op *Op) []string {
	switch op.Kind {
	case OpWrite, OpTruncate:
		return []string{fmt.Sprint("f", op.Ino)}
	case OpCreate, OpMkdir, OpUnlink, OpRmdir:
		return []string{fmt.Sprint("d", op.Dir)}
	case OpRename, OpLink:
		return []string{fmt.Sprint("d", op.Dir), fmt.Sprint("d", op.Dir2)}
	case OpFsync:
		if op.IsDir {
			return []string{fmt.Sprint("d", op.Ino)}
		}
		return []string{fmt.Sprint("f", op.Ino)}
	}
	return nil
}

// weakPoint is what the weak model leaves free at one crash point.
type weakPoint struct {
	crash  int
	forced []int            // persisted for sure: a later barrier covers them
	files  map[string][]int // unforced writes of each file, in order: a prefix persists
	dirOps []int            // unforced directory operations: any subset persists
}

func weakAt(ops []Op, c int) weakPoint {
	synced := map[string]bool{} // domains with a barrier after the op, before c
	forcedSet := make([]bool, c)
	for i := c - 1; i >= 0; i-- {
		op := &ops[i]
		if op.Kind == OpFsync {
			for _, k := range keys(op) {
				synced[k] = true
			}
			continue
		}
		for _, k := range keys(op) {
			if synced[k] {
				forcedSet[i] = true
			}
		}
	}
	w := weakPoint{crash: c, files: map[string][]int{}}
	for i := 0; i < c; i++ {
		op := &ops[i]
		switch {
		case op.Kind == OpFsync || op.Kind == OpPromise:
		case forcedSet[i]:
			w.forced = append(w.forced, i)
		case op.Kind == OpWrite || op.Kind == OpTruncate:
			k := keys(op)[0]
			w.files[k] = append(w.files[k], i)
		default:
			w.dirOps = append(w.dirOps, i)
		}
	}
	return w
}

// count is the number of states at this point, capped at limit+1.
func (w *weakPoint) count(limit int) int {
	n := 1
	for _, f := range w.files {
		n *= len(f) + 1
		if n > limit {
			return limit + 1
		}
	}
	for range w.dirOps {
		n *= 2
		if n > limit {
			return limit + 1
		}
	}
	return n
}

// state builds the state choosing, for each file, a prefix of pre[k]
// writes, and the directory operations whose bits are set in mask.
func (w *weakPoint) state(ops []Op, prefix map[string]int, dirKept func(j int) bool) State {
	keep := make([]bool, w.crash)
	for _, i := range w.forced {
		keep[i] = true
	}
	for k, f := range w.files {
		for _, i := range f[:prefix[k]] {
			keep[i] = true
		}
	}
	for j, i := range w.dirOps {
		if dirKept(j) {
			keep[i] = true
		}
	}
	s := State{Crash: w.crash, Partial: -1, Promised: promisedBefore(ops, w.crash)}
	for i, k := range keep {
		if k {
			s.Kept = append(s.Kept, i)
		}
	}
	return s
}

// Weak returns the states of the weak model (ALICE's abstract persistence
// model as the issue states it): at a crash after any operation, what a
// later barrier covers persisted — an fsync of a file covers its earlier
// writes, an fsync of a directory its earlier entry changes — and of the
// rest any subset that keeps each file's own writes in order (a prefix
// per file) with any subset of the directory operations. A rename or link
// belongs to both its directories; a barrier on either forces it.
//
// When the whole space is at most limit states, it is enumerated. Else,
// at every crash point, the states built on purpose: nothing unforced
// persisted, everything did, and everything but one operation (a
// directory operation, or a write with the later writes of its file) —
// the reorderings ALICE found most bugs with; then limit states drawn
// with rng.
func Weak(ops []Op, limit int, rng *rand.Rand) (states []State, total int, exhaustive bool) {
	var points []weakPoint
	for c := 1; c <= len(ops); c++ {
		if ops[c-1].Kind == OpFsync {
			continue // its states are among those of crashing just before the fsync
		}
		w := weakAt(ops, c)
		points = append(points, w)
		total += w.count(1 << 30)
		if total > 1<<30 {
			total = 1 << 30
		}
	}
	if total <= limit {
		for _, w := range points {
			states = append(states, enumerate(ops, w)...)
		}
		return states, total, true
	}
	keepAll := func(int) bool { return true }
	for _, w := range points {
		all := map[string]int{}
		for k, f := range w.files {
			all[k] = len(f)
		}
		states = append(states, w.state(ops, map[string]int{}, func(int) bool { return false }),
			w.state(ops, all, keepAll))
		for j := range w.dirOps {
			states = append(states, w.state(ops, all, func(i int) bool { return i != j }))
		}
		for _, k := range sortedKeys(w.files) {
			for n := range w.files[k] {
				pre := map[string]int{}
				for k2, v := range all {
					pre[k2] = v
				}
				pre[k] = n
				states = append(states, w.state(ops, pre, keepAll))
			}
		}
	}
	for range limit {
		w := points[rng.IntN(len(points))]
		pre := map[string]int{}
		for _, k := range sortedKeys(w.files) {
			pre[k] = rng.IntN(len(w.files[k]) + 1)
		}
		bits := make([]bool, len(w.dirOps))
		for j := range bits {
			bits[j] = rng.IntN(2) == 0
		}
		st := w.state(ops, pre, func(j int) bool { return bits[j] })
		st.Drawn = true
		states = append(states, st)
	}
	return states, total, false
}

func enumerate(ops []Op, w weakPoint) []State {
	files := sortedKeys(w.files)
	var out []State
	pre := map[string]int{}
	var rec func(i int)
	rec = func(i int) {
		if i < len(files) {
			for n := 0; n <= len(w.files[files[i]]); n++ {
				pre[files[i]] = n
				rec(i + 1)
			}
			return
		}
		for mask := 0; mask < 1<<len(w.dirOps); mask++ {
			out = append(out, w.state(ops, pre, func(j int) bool { return mask&(1<<j) != 0 }))
		}
	}
	rec(0)
	return out
}

func sortedKeys(m map[string][]int) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
