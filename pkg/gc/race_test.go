package gc

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/retval/retval/pkg/retain"
)

type kept struct {
	run, id, sha string
	size         int64
}

// TestRaceWritersReadersGC runs writers retaining into live runs (and
// reviving idle ones), readers reading everything back, and gc with tight
// caps, all at once, in a fixed number of rounds; run it with -race. No
// value whose retain returned is ever lost or read wrong.
//
// Each round drives the interleaving it checks: gc plans first, while the
// writers are held back (only their own live runs and the readers race the
// scan); then a writer revives a run the plan removes, and only then does
// gc execute, racing every writer and reader. So in every round gc must
// skip the revived run (changed, or busy when another writer is in it),
// collect the round's idle run nobody touches, skip the run whose lock the
// test holds, and remove the debris of a quiet run — whatever the
// machine's speed.
func TestRaceWritersReadersGC(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	const (
		idleRuns  = 40
		rounds    = 8
		writers   = 3
		perRound  = 6 // values each writer retains in a round
		reads     = 20
		readerNum = 2
	)
	now := time.Now()
	old := now.Add(-40 * 24 * time.Hour)
	s := retain.Open(t.TempDir())
	ageRun := func(run string) {
		filepath.Walk(s.RunDir(retain.ID(run)), func(p string, _ os.FileInfo, _ error) error { return os.Chtimes(p, old, old) })
	}
	for i := range idleRuns {
		run := fmt.Sprintf("idle%02d", i)
		put(t, s, run, "v", bytes.Repeat([]byte(run+"\n"), 200))
		ageRun(run)
	}
	// held: idle, but a writer (the test) holds its lock all along.
	put(t, s, "held", "v", []byte("held\n"))
	ageRun("held")
	hold, err := s.LockRun("held")
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Unlock()
	// quiet: active, nobody writes into it, old debris appears each round.
	put(t, s, "quiet", "v", []byte("quiet\n"))

	var mu sync.Mutex
	var values []kept
	record := func(k kept) {
		mu.Lock()
		values = append(values, k)
		mu.Unlock()
	}
	pick := func(r *rand.Rand) (kept, bool) {
		mu.Lock()
		defer mu.Unlock()
		if len(values) == 0 {
			return kept{}, false
		}
		return values[r.IntN(len(values))], true
	}
	write := func(w, i int, run string) error {
		n := 1 + (w*7919+i*104729)%3000
		if i%10 == 0 {
			n = 70000 // ≈ 1.2 MiB: indexed, read block by block
		}
		body := bytes.Repeat(fmt.Appendf(nil, "w%d value %d line\n", w, i), n)
		call := fmt.Sprintf("w%d-%d", w, i)
		var out bytes.Buffer
		res, err := s.Retain(bytes.NewReader(body), &out, retain.RetainOptions{Run: run, Call: call, Limits: lim, Policy: retain.PolicyLegacy})
		if err != nil || !res.Retained {
			return fmt.Errorf("retain %s/%s: %v (warning %v)", run, call, err, res.Warning)
		}
		sum := sha256.Sum256(body)
		record(kept{run, call, hex.EncodeToString(sum[:]), int64(len(body))})
		return nil
	}

	reasons := map[string]int{}
	for k := range rounds {
		gen, doom := fmt.Sprintf("gen-%d", k), fmt.Sprintf("doom-%d", k)
		for _, run := range []string{gen, doom} {
			put(t, s, run, "v", []byte("idle\n"))
			ageRun(run)
		}
		os.Chtimes(filepath.Join(s.RunDir("quiet"), "v.txt"), now, now)
		dead := fmt.Sprintf(".tmp-dead-%d", k)
		for _, run := range []string{"quiet", "live0", "live1"} {
			p := filepath.Join(s.RunDir(retain.ID(run)), dead)
			if os.WriteFile(p, []byte("debris"), 0o600) == nil {
				os.Chtimes(p, now.Add(-2*time.Hour), now.Add(-2*time.Hour))
			}
		}

		start, planned, revived := make(chan struct{}), make(chan struct{}), make(chan struct{})
		// Each gate opens once, also when its opener fails, so that no
		// goroutine is left waiting on it.
		plannedDone := sync.OnceFunc(func() { close(planned) })
		revivedDone := sync.OnceFunc(func() { close(revived) })
		var wg sync.WaitGroup
		errs := make(chan error, writers*perRound+readerNum*reads+1)
		for w := range writers {
			wg.Go(func() {
				if w == 0 {
					defer revivedDone()
				}
				<-start
				live := fmt.Sprintf("live%d", w)
				if err := write(w, k*perRound, live); err != nil { // races the scan
					errs <- err
					return
				}
				<-planned
				if w == 0 {
					// Revive the run gc just planned to remove.
					err := write(w, k*perRound+1, gen)
					revivedDone()
					if err != nil {
						errs <- err
						return
					}
				}
				for i := 1; i < perRound; i++ {
					if w == 0 && i == 1 {
						continue
					}
					run := live
					switch i % 3 {
					case 1:
						run = fmt.Sprintf("idle%02d", (k*writers*perRound+w*perRound+i)%idleRuns)
					case 2:
						run = fmt.Sprintf("gen-%d", max(0, k-i%2)) // a run gc is deciding on
					}
					if err := write(w, k*perRound+i, run); err != nil {
						errs <- err
						return
					}
					// Let another goroutine (gc) have the run now and
					// then, as a harness does between calls; what each
					// round must show does not depend on how often.
					runtime.Gosched()
				}
			})
		}
		for rd := range readerNum {
			wg.Go(func() {
				<-start
				r := rand.New(rand.NewPCG(uint64(rd), uint64(k)))
				for range reads {
					if kv, ok := pick(r); ok {
						if err := readBack(s, kv, r); err != nil {
							errs <- fmt.Errorf("read %s/%s: %v", kv.run, kv.id, err)
						}
					}
				}
			})
		}
		o := Options{MaxAge: 24 * time.Hour, Grace: time.Hour, KeepRuns: 3, Workers: 1 + k%4}
		if k%2 == 1 {
			o.MaxBytes = 1
		}
		var rep *Report
		var plan *Plan
		wg.Go(func() {
			defer plannedDone()
			<-start
			l, err := s.LockCollector(true)
			if err != nil {
				errs <- err
				return
			}
			defer l.Unlock()
			if plan, err = MakePlan(s, o); err != nil {
				errs <- err
				return
			}
			plannedDone()
			<-revived
			if rep, err = Execute(s, plan, o); err != nil {
				errs <- fmt.Errorf("gc: %v", err)
			}
		})
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if t.Failed() {
			t.FailNow()
		}

		// What every round must show, however the rest interleaved.
		if !slices.ContainsFunc(plan.Remove, func(r Removal) bool { return r.Run == retain.ID(gen) }) {
			t.Fatalf("round %d: the plan does not remove %s: %v", k, gen, names(plan.Remove))
		}
		if slices.ContainsFunc(rep.Removed, func(r Removal) bool { return r.Run == retain.ID(gen) }) {
			t.Fatalf("round %d: %s was removed although a value was retained into it after the plan", k, gen)
		}
		if !slices.ContainsFunc(rep.Skipped, func(sk Skip) bool {
			return sk.Run == retain.ID(gen) && (sk.Reason == SkipChanged || sk.Reason == SkipBusy)
		}) {
			t.Fatalf("round %d: %s not skipped as changed or busy: %v", k, gen, skips(rep.Skipped))
		}
		if !slices.ContainsFunc(rep.Removed, func(r Removal) bool { return r.Run == retain.ID(doom) }) {
			t.Fatalf("round %d: %s (idle, untouched) not removed: %v", k, doom, names(rep.Removed))
		}
		if !slices.ContainsFunc(rep.Skipped, func(sk Skip) bool { return sk.Run == "held" && sk.Reason == SkipBusy }) {
			t.Fatalf("round %d: held not skipped as busy: %v", k, skips(rep.Skipped))
		}
		if !slices.ContainsFunc(rep.Debris, func(d Debris) bool { return d.Path == filepath.Join("quiet.values", dead) }) {
			t.Fatalf("round %d: the quiet run's debris not removed: %v", k, rep.Debris)
		}
		for _, sk := range rep.Skipped {
			reasons[sk.Rule+"/"+sk.Reason]++
		}
	}

	// Everything recorded is still there and exact.
	if len(values) != rounds*writers*perRound {
		t.Fatalf("%d values recorded, want %d", len(values), rounds*writers*perRound)
	}
	r := rand.New(rand.NewPCG(9, 9))
	for _, k := range values {
		if err := readBack(s, k, r); err != nil {
			t.Errorf("after the race, %s/%s: %v", k.run, k.id, err)
		}
	}
	t.Logf("%d rounds: %d values retained; skips by rule/reason: %v", rounds, len(values), reasons)
	if rep, err := s.Verify(retain.VerifyOptions{Grace: time.Hour}); err != nil || !rep.OK() {
		t.Fatalf("verify after the race: %v %+v", err, rep)
	}
}

// readBack reads k whole (checked against its SHA-256 here) or a random
// slice (checked against the same bytes of the whole).
func readBack(s *retain.Store, k kept, r *rand.Rand) error {
	v, err := s.OpenValue(k.run, k.id)
	if err != nil {
		return err
	}
	defer v.Close()
	if v.Size() != k.size {
		return fmt.Errorf("size %d, want %d", v.Size(), k.size)
	}
	whole, err := v.Bytes(0, v.Size())
	if err != nil {
		return err
	}
	if sum := sha256.Sum256(whole); hex.EncodeToString(sum[:]) != k.sha {
		return errors.New("torn read: bytes do not match")
	}
	a := r.Int64N(k.size)
	b := a + r.Int64N(k.size-a+1)
	part, err := v.Bytes(a, b)
	if err != nil {
		return err
	}
	if !bytes.Equal(part, whole[a:b]) {
		return fmt.Errorf("slice %d-%d differs", a, b)
	}
	return nil
}
