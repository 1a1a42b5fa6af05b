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
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retval/retval/pkg/retain"
)

type kept struct {
	run, id, sha string
	size         int64
}

// TestRaceWritersReadersGC runs writers retaining into live runs (and
// reviving idle ones), readers reading everything back, and gc in a loop
// with tight caps, all at once; run it with -race. No value whose retain
// returned is ever lost or read wrong, while idle runs do get collected.
func TestRaceWritersReadersGC(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	now := time.Now()
	s := retain.Open(t.TempDir())
	const idleRuns = 40
	for i := range idleRuns {
		run := fmt.Sprintf("idle%02d", i)
		put(t, s, run, "v", bytes.Repeat([]byte(run+"\n"), 200))
		age(t, s.RunDir(retain.ID(run)), now, 40*24*time.Hour)
	}

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
	var failures atomic.Int64
	fail := func(format string, args ...any) {
		failures.Add(1)
		t.Errorf(format, args...)
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	// The ager keeps making idle runs gen-K for gc to collect, and for
	// writers to revive while gc is deciding on them.
	var aged atomic.Int64
	aged.Store(-1)
	wg.Go(func() {
		for k := int64(0); ; k++ {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			run := fmt.Sprintf("gen-%d", k)
			var out bytes.Buffer
			if _, err := s.Retain(bytes.NewReader([]byte("idle\n")), &out, retain.RetainOptions{Run: run, Call: "v", Limits: lim, Policy: retain.PolicyLegacy}); err != nil {
				fail("ager: %v", err)
				return
			}
			old := now.Add(-40 * 24 * time.Hour)
			filepath.Walk(s.RunDir(retain.ID(run)), func(p string, _ os.FileInfo, _ error) error { return os.Chtimes(p, old, old) })
			aged.Store(k)
		}
	})
	// Writers: each into its own live run, some values large enough for an
	// index; every few values one goes into an idle run, racing gc for it.
	for w := range 3 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				run := fmt.Sprintf("live%d", w)
				if k := aged.Load(); i%3 == 2 && k >= 0 {
					run = fmt.Sprintf("gen-%d", max(0, k-r.Int64N(3))) // a run gc is about to take
				} else if i%3 == 1 {
					run = fmt.Sprintf("idle%02d", r.IntN(idleRuns))
				}
				n := 1 + r.IntN(3000)
				if i%10 == 0 {
					n = 70000 // ≈ 1.2 MiB: indexed, read block by block
				}
				body := bytes.Repeat(fmt.Appendf(nil, "w%d value %d line\n", w, i), n)
				call := fmt.Sprintf("w%d-%d", w, i)
				var out bytes.Buffer
				res, err := s.Retain(bytes.NewReader(body), &out, retain.RetainOptions{Run: run, Call: call, Limits: lim, Policy: retain.PolicyLegacy})
				if err != nil || !res.Retained {
					fail("retain %s/%s: %v (warning %v)", run, call, err, res.Warning)
					return
				}
				sum := sha256.Sum256(body)
				record(kept{run, call, hex.EncodeToString(sum[:]), int64(len(body))})
				time.Sleep(time.Millisecond) // let go of the run now and then, as a harness does
			}
		})
	}
	// Readers: any recorded value, whole or a slice, must read back exact.
	for rd := range 2 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(rd), 2))
			for {
				select {
				case <-stop:
					return
				default:
				}
				k, ok := pick(r)
				if !ok {
					continue
				}
				if err := readBack(s, k, r); err != nil {
					fail("read %s/%s: %v", k.run, k.id, err)
				}
			}
		})
	}
	// Debris appears in live runs now and then; gc may only take it under
	// the run's lock, and only once old.
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			dir := s.RunDir(retain.ID(fmt.Sprintf("live%d", i%3)))
			p := filepath.Join(dir, fmt.Sprintf(".tmp-dead-%d", i))
			if os.WriteFile(p, []byte("debris"), 0o600) == nil {
				old := now.Add(-2 * time.Hour)
				os.Chtimes(p, old, old)
			}
		}
	})

	removed, debris, skipped, rounds := 0, 0, 0, 0
	reasons := map[string]int{}
	deadline := time.Now().Add(3 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		rounds++
		o := Options{MaxAge: 24 * time.Hour, Grace: time.Hour, KeepRuns: 3, Workers: 1 + i%4}
		if i%2 == 1 {
			o.MaxBytes = 1
		}
		rep, err := Collect(s, o)
		if err != nil {
			fail("gc: %v", err)
			break
		}
		removed += len(rep.Removed)
		debris += len(rep.Debris)
		skipped += len(rep.Skipped)
		for _, sk := range rep.Skipped {
			reasons[sk.Rule+"/"+sk.Reason]++
		}
		if failures.Load() > 0 {
			break
		}
	}
	close(stop)
	wg.Wait()

	// Everything recorded is still there and exact.
	r := rand.New(rand.NewPCG(9, 9))
	for _, k := range values {
		if err := readBack(s, k, r); err != nil {
			t.Errorf("after the race, %s/%s: %v", k.run, k.id, err)
		}
	}
	t.Logf("%d gc rounds: %d values retained, %d runs collected, %d debris removed, %d skips", rounds, len(values), removed, debris, skipped)
	t.Logf("skips by rule/reason: %v", reasons)
	if removed == 0 || debris == 0 || skipped == 0 || len(values) < 10 {
		t.Fatalf("the race did not exercise gc: %d values, %d removed, %d debris, %d skipped", len(values), removed, debris, skipped)
	}
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
