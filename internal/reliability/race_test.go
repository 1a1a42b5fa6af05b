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
)

// TestReadersDuringRacingWriters: six processes retain different bytes
// under one call id (half plain, half zstd) while four processes read that
// id whole, over and over. Exactly one writer wins and the rest fail with
// conflict; every read either says unknown_reference (before the winner
// commits) or prints exactly the winner's bytes — never a torn mix, never
// a loser's bytes. The interleaving is driven, not timed: every reader
// reads once before any writer starts, reads on while they run, and reads
// once more after the last has finished.
func TestReadersDuringRacingWriters(t *testing.T) {
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	const writers, readers = 6, 4
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
	var reads, before, exact, firstReads, lastReads int
	// read reads the value whole; first is a read that starts before any
	// writer, last one that starts after every writer finished.
	read := func(first, last bool) {
		r := retvalRun(t, nil, "resolve", "--runs-dir", runs, "--run", "r", "same", "--max-lookup-bytes", "0", "--max-step-bytes", "0")
		mu.Lock()
		defer mu.Unlock()
		reads++
		switch {
		case r.code == 3 && bytes.Contains(r.stderr, []byte("(unknown_reference)")):
			before++
			if last {
				t.Errorf("a read after every writer finished: unknown_reference")
			}
		case r.code == 0:
			if first {
				t.Errorf("a read before any writer started found a value")
			}
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
		if first {
			firstReads++
		}
		if last {
			lastReads++
		}
	}
	var ready, wg sync.WaitGroup
	ready.Add(readers)
	for range readers {
		wg.Go(func() {
			read(true, false)
			ready.Done()
			for !done.Load() && !t.Failed() {
				read(false, false)
			}
			read(false, true)
		})
	}
	ready.Wait() // every reader has read once, before any writer
	results := make([]result, writers)
	var ww sync.WaitGroup
	for w := range writers {
		ww.Go(func() {
			results[w] = retvalRun(t, nil, "retain", "--runs-dir", runs, "--run", "r", "--call", "same", "--threshold", "0",
				"--compress", []string{"none", "zstd"}[w%2], paths[w])
		})
	}
	ww.Wait()
	done.Store(true) // every read that starts from here on is a last one
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
	if firstReads != readers || lastReads != readers || before < readers || exact < readers {
		t.Fatalf("%d reads before the writers and %d after them, %d unknown and %d exact: want %d of each at least",
			firstReads, lastReads, before, exact, readers)
	}
}

// TestGCLoopWithWriters: in each of a fixed number of rounds, three
// writers each retain a value (30 KiB to 3 MiB, plain and zstd) into a
// fresh run while two readers read values of earlier rounds back and one
// gc runs with no grace period and --keep-runs 4, so it collects the runs
// of earlier rounds and sees every writer's temp files as debris unless
// the run's lock protects them. The round ends when all six have finished:
// every round races one gc against live writers and readers, however fast
// or loaded the machine is. Every value whose stub was printed reads back
// exactly, or says collected — never corrupt, never missing, never wrong
// bytes; and no write in progress loses its temp file (a writer falls back
// to verbatim only if its disk write failed, which must not happen here).
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
	rounds := 25
	if quick() {
		rounds = 8
	}
	const writers, readers, readsPerRound, keep = 3, 2, 2, 4
	var mu sync.Mutex
	var values []kept
	retainOne := func(run, call string, size int, comp string) {
		res := retvalRun(t, nil, "retain", "--runs-dir", runs, "--run", run, "--call", call, "--threshold", "1KiB",
			"--compress", comp, paths[size])
		switch {
		case res.code != 0:
			t.Errorf("retain %s/%s: exit %d: %s", run, call, res.code, res.stderr)
		case bytes.HasPrefix(res.stdout, []byte("[retained #"+call+"]")):
			mu.Lock()
			values = append(values, kept{run, call, size})
			mu.Unlock()
		case bytes.Equal(res.stdout, data[size]):
			t.Errorf("retain %s/%s fell back to verbatim: %s", run, call, res.stderr)
		default:
			t.Errorf("retain %s/%s printed neither a stub nor its input", run, call)
		}
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
	// A first run, so the first round's gc has a runs-dir to collect in.
	retainOne("first", "c-first", sizes[0], "none")
	var removed, debris, busy int
	for i := range rounds {
		// What the readers read this round: values of earlier rounds,
		// drawn here so the seed replays them.
		mu.Lock()
		picks := make([][]kept, readers)
		for rd := range picks {
			for range readsPerRound {
				picks[rd] = append(picks[rd], values[r.IntN(len(values))])
			}
		}
		mu.Unlock()
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				retainOne(fmt.Sprintf("w%d-%03d", w, i), fmt.Sprintf("c%d-%d", w, i), sizes[(w+i)%len(sizes)], []string{"none", "zstd"}[i%2])
			})
		}
		for rd := range readers {
			wg.Go(func() {
				for _, k := range picks[rd] {
					check(k)
				}
			})
		}
		var rep gcReport
		wg.Go(func() {
			res := retvalRun(t, nil, "gc", "--runs-dir", runs, "--grace", "0s", "--keep-runs", fmt.Sprint(keep), "--json")
			if res.code != 0 {
				t.Errorf("gc in round %d: exit %d: %s %s", i, res.code, res.stdout, res.stderr)
				return
			}
			decode(t, res.stdout, &rep)
		})
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		removed += len(rep.Removed)
		debris += len(rep.Debris)
		for _, s := range rep.Skipped {
			if s.Reason == "busy" {
				busy++
			}
		}
	}
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
	t.Logf("%d rounds, %d values retained, 0 verbatim; %d gc rounds removed %d runs and %d debris files, skipped %d busy; %d reads: %d exact, %d collected, 0 wrong",
		rounds, len(values), rounds, removed, debris, busy, reads.Load(), readExact.Load(), readCollected.Load())
	// From the fourth round on, each gc finds more finished runs than
	// --keep-runs and the readers can hold: it must have collected some,
	// and the final reads of those say collected.
	if removed == 0 || readCollected.Load() == 0 {
		t.Fatalf("gc collected %d runs and %d reads said collected: want some of each", removed, readCollected.Load())
	}
}
