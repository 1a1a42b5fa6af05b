package reliability

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestReadersDuringRacingWriters: six processes retain different bytes
// under one call id (half plain, half zstd) while four processes read that
// id whole, over and over. Exactly one writer wins and the rest fail with
// conflict; every read either says unknown_reference (before the winner
// commits) or prints exactly the winner's bytes — never a torn mix, never
// a loser's bytes.
func TestReadersDuringRacingWriters(t *testing.T) {
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	const writers = 6
	inputs := make([][]byte, writers)
	paths := make([]string, writers)
	for w := range writers {
		var b bytes.Buffer
		for i := 0; b.Len() < 2<<20; i++ {
			fmt.Fprintf(&b, "writer %d line %d %s\n", w, i, strings.Repeat("w", i%80))
		}
		inputs[w] = b.Bytes()
		paths[w] = filepath.Join(dir, fmt.Sprintf("in%d", w))
		if err := os.WriteFile(paths[w], inputs[w], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The run exists before the race, so readers see unknown_reference
	// for the value, not for the run.
	mustRun(t, 0, "retain", "--runs-dir", runs, "--run", "r", "--call", "other", "--threshold", "0", paths[0])

	var done atomic.Bool
	var mu sync.Mutex
	var winner []byte
	var reads, before, exact int
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for n := 0; !done.Load() || n < 3; n++ {
				r := retvalRun(t, nil, "resolve", "--runs-dir", runs, "--run", "r", "same", "--max-lookup-bytes", "0", "--max-step-bytes", "0")
				mu.Lock()
				reads++
				switch {
				case r.code == 3 && bytes.Contains(r.stderr, []byte("(unknown_reference)")):
					before++
				case r.code == 0:
					if winner == nil {
						winner = r.stdout
					}
					if !bytes.Equal(r.stdout, winner) {
						t.Errorf("read %d bytes that differ from the first read's %d", len(r.stdout), len(winner))
					}
					exact++
				default:
					t.Errorf("read: exit %d, stderr %s", r.code, r.stderr)
				}
				mu.Unlock()
				if t.Failed() {
					return
				}
			}
		})
	}
	time.Sleep(50 * time.Millisecond) // some reads before any writer
	results := make([]result, writers)
	var ww sync.WaitGroup
	for w := range writers {
		ww.Go(func() {
			results[w] = retvalRun(t, nil, "retain", "--runs-dir", runs, "--run", "r", "--call", "same", "--threshold", "0",
				"--compress", []string{"none", "zstd"}[w%2], paths[w])
		})
	}
	ww.Wait()
	done.Store(true)
	wg.Wait()

	won := -1
	for w, r := range results {
		switch {
		case r.code == 0 && won < 0:
			won = w
		case r.code == 1 && bytes.Contains(r.stderr, []byte("(conflict)")):
		default:
			t.Fatalf("writer %d: exit %d, stderr %s (winner so far %d)", w, r.code, r.stderr, won)
		}
	}
	if won < 0 {
		t.Fatal("no writer won")
	}
	if winner != nil && !bytes.Equal(winner, inputs[won]) {
		t.Fatalf("readers saw bytes other than the winner's (writer %d)", won)
	}
	final := mustRun(t, 0, "resolve", "--runs-dir", runs, "--run", "r", "same", "--max-lookup-bytes", "0", "--max-step-bytes", "0")
	if !bytes.Equal(final.stdout, inputs[won]) {
		t.Fatal("the value holds other bytes than its winner's")
	}
	checkStore(t, runs, map[string][]byte{"same": inputs[won]})
	t.Logf("%d writers: 1 won, %d conflict; %d reads: %d before the commit, %d exact, 0 torn", writers, writers-1, reads, before, exact)
	if exact == 0 {
		t.Fatal("no read saw the committed value")
	}
}

// TestGCLoopWithWriters: three writers retain values (30 KiB to 3 MiB,
// plain and zstd) each into a fresh run, two readers read them back, and
// gc runs in a loop with no grace period and --keep-runs 4, so it
// collects runs right after their writer finished and sees every
// writer's temp files as debris unless the run's lock protects them. Every
// value whose stub was printed reads back exactly, or says collected —
// never corrupt, never missing, never wrong bytes; and no write in
// progress loses its temp file (a writer falls back to verbatim only if
// its disk write failed, which must not happen here).
func TestGCLoopWithWriters(t *testing.T) {
	r := seeded(t)
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	sizes := []int{30 << 10, 200 << 10, 1200 << 10, 3 << 20}
	paths := map[int]string{}
	data := map[int][]byte{}
	for _, n := range sizes {
		paths[n] = makeInput(t, dir, n)
		data[n], _ = os.ReadFile(paths[n])
	}
	type kept struct {
		run, id string
		size    int
	}
	var mu sync.Mutex
	var values []kept
	perWriter := 25
	if quick() {
		perWriter = 8
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var writersWG sync.WaitGroup
	var verbatim atomic.Int64
	for w := range 3 {
		writersWG.Go(func() {
			for i := range perWriter {
				size := sizes[(w+i)%len(sizes)]
				run, call := fmt.Sprintf("w%d-%03d", w, i), fmt.Sprintf("c%d-%d", w, i)
				res := retvalRun(t, nil, "retain", "--runs-dir", runs, "--run", run, "--call", call, "--threshold", "1KiB",
					"--compress", []string{"none", "zstd"}[i%2], paths[size])
				switch {
				case res.code != 0:
					t.Errorf("retain %s/%s: exit %d: %s", run, call, res.code, res.stderr)
				case bytes.HasPrefix(res.stdout, []byte("[retained #"+call+"]")):
					mu.Lock()
					values = append(values, kept{run, call, size})
					mu.Unlock()
				case bytes.Equal(res.stdout, data[size]):
					verbatim.Add(1)
					t.Errorf("retain %s/%s fell back to verbatim: %s", run, call, res.stderr)
				default:
					t.Errorf("retain %s/%s printed neither a stub nor its input", run, call)
				}
			}
		})
	}
	var reads, readExact, readCollected atomic.Int64
	check := func(k kept) {
		res := retvalRun(t, nil, "resolve", "--runs-dir", runs, "--run", k.run, k.id, "--max-lookup-bytes", "0", "--max-step-bytes", "0")
		reads.Add(1)
		switch {
		case res.code == 0 && bytes.Equal(res.stdout, data[k.size]):
			readExact.Add(1)
		case res.code == 3 && bytes.Contains(res.stderr, []byte("(collected)")):
			readCollected.Add(1)
		default:
			t.Errorf("resolve %s/%s: exit %d, %d bytes (want %d): %s", k.run, k.id, res.code, len(res.stdout), k.size, res.stderr)
		}
	}
	for rd := range 2 {
		wg.Go(func() {
			for !stop.Load() {
				mu.Lock()
				n := len(values)
				var k kept
				if n > 0 {
					k = values[(rd*7919+int(reads.Load()))%n]
				}
				mu.Unlock()
				if n == 0 {
					time.Sleep(5 * time.Millisecond)
					continue
				}
				check(k)
			}
		})
	}
	var rounds, removed, debris, busy atomic.Int64
	wg.Go(func() {
		for !stop.Load() {
			res := retvalRun(t, nil, "gc", "--runs-dir", runs, "--grace", "0s", "--keep-runs", "4", "--json")
			if res.code == 1 && bytes.Contains(res.stdout, []byte("does not exist")) || res.code == 1 && bytes.Contains(res.stderr, []byte("does not exist")) {
				time.Sleep(5 * time.Millisecond) // no runs-dir yet
				continue
			}
			if res.code != 0 {
				t.Errorf("gc: exit %d: %s %s", res.code, res.stdout, res.stderr)
				return
			}
			var rep gcReport
			decode(t, res.stdout, &rep)
			rounds.Add(1)
			removed.Add(int64(len(rep.Removed)))
			debris.Add(int64(len(rep.Debris)))
			for _, s := range rep.Skipped {
				if s.Reason == "busy" {
					busy.Add(1)
				}
			}
			time.Sleep(time.Duration(r.IntN(20)) * time.Millisecond)
		}
	})
	writersWG.Wait()
	stop.Store(true)
	wg.Wait()
	for _, k := range values {
		check(k)
	}
	checkStore(t, runs, nil)
	mustRun(t, 0, "gc", "--runs-dir", runs, "--grace", "0s")
	var vr verifyReport
	decode(t, mustRun(t, 0, "verify", "--runs-dir", runs, "--grace", "0s", "--json").stdout, &vr)
	if vr.Corrupt+vr.Missing+vr.Debris != 0 {
		t.Fatalf("verify after the loop: %+v", vr)
	}
	t.Logf("%d values retained, %d verbatim; %d gc rounds removed %d runs and %d debris files, skipped %d busy; %d reads: %d exact, %d collected, 0 wrong",
		len(values), verbatim.Load(), rounds.Load(), removed.Load(), debris.Load(), busy.Load(), reads.Load(), readExact.Load(), readCollected.Load())
	if removed.Load() == 0 || readCollected.Load() == 0 {
		t.Fatalf("gc never collected a run the readers knew: the test did not race")
	}
}
