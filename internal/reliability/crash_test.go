package reliability

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retval/retval/pkg/retain"
)

// crashInputs are the sizes the crash test retains; under -race the
// binary is too slow for the largest.
func crashInputs() []int {
	if raceEnabled {
		return []int{30 << 10, 2 << 20}
	}
	return []int{30 << 10, 2 << 20, 24 << 20}
}

func makeInput(t *testing.T, dir string, size int) string {
	t.Helper()
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "%d line of a crash test — ünïcode %s\n", i, strings.Repeat("z", i%97))
	}
	p := filepath.Join(dir, fmt.Sprintf("in-%d.txt", size))
	if err := os.WriteFile(p, b.Bytes()[:size], 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkStore asserts the store's promise: every descriptor has its whole
// content (size and SHA-256), so no stub can point at nothing. It returns
// the number of values and of debris files seen.
func checkStore(t *testing.T, runs string, inputs map[string][]byte) (values, debris int) {
	t.Helper()
	return checkValues(t, runs, inputs, nil)
}

// checkValues is checkStore limited to the value ids in only (all if nil).
func checkValues(t *testing.T, runs string, inputs map[string][]byte, only map[string]bool) (values, debris int) {
	t.Helper()
	s := retain.Open(runs)
	ents, err := os.ReadDir(runs)
	if errors.Is(err, os.ErrNotExist) {
		return 0, 0
	}
	for _, re := range ents {
		run, ok := strings.CutSuffix(re.Name(), ".values") // SPEC §1 layout
		if !ok {
			continue
		}
		files, _ := os.ReadDir(filepath.Join(runs, re.Name()))
		for _, f := range files {
			name := f.Name()
			if strings.HasPrefix(name, ".tmp-") {
				debris++
				continue
			}
			id, ok := strings.CutSuffix(name, ".meta.json")
			if !ok || only != nil && !only[id] {
				continue
			}
			values++
			v, err := s.OpenValue(string(run), id)
			if err != nil {
				t.Fatalf("descriptor %s/%s without whole content: %v", run, name, err)
			}
			got, err := v.Bytes(0, v.Size())
			v.Close()
			if err != nil {
				t.Fatalf("value %s/%s unreadable: %v", run, id, err)
			}
			sum := sha256.Sum256(got)
			if hex.EncodeToString(sum[:]) != v.Desc.SHA256 {
				t.Fatalf("value %s/%s: digest mismatch", run, id)
			}
			if want, ok := inputs[id]; ok && !bytes.Equal(got, want) {
				t.Fatalf("value %s/%s holds other bytes than were retained", run, id)
			}
		}
	}
	return values, debris
}

// killStage names what a killed retain of call left in its run directory:
// the stage of the write path the kill hit.
func killStage(t *testing.T, dir, call string) string {
	t.Helper()
	var temp, content, meta bool
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		n := e.Name()
		switch {
		case strings.HasPrefix(n, ".tmp-"+call+"-"):
			temp = true
		case n == call+".meta.json":
			meta = true
		case n == call+".txt" || n == call+".txt.zst":
			content = true
		}
	}
	switch {
	case meta:
		return "committed"
	case content:
		return "content renamed, no descriptor"
	case temp:
		return "temp file"
	}
	return "nothing"
}

// TestCrashRetain kills `retval retain` with SIGKILL at random points and
// checks after each kill that the store holds only whole values, and that
// replay prints either the stub of a whole value or the text verbatim.
// -short (and -race) runs 50 iterations; the full run 500.
func TestCrashRetain(t *testing.T) {
	iters := 500
	if quick() {
		iters = 50
	}
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	paths := map[int]string{}
	data := map[int][]byte{}
	sizes := crashInputs()
	for _, n := range sizes {
		paths[n] = makeInput(t, dir, n)
		data[n], _ = os.ReadFile(paths[n])
	}
	inputs := map[string][]byte{}
	r := seeded(t)
	// Start-up: how long a retain takes that writes nothing. Kills
	// before that hit nothing of the write path.
	tiny := filepath.Join(dir, "tiny")
	os.WriteFile(tiny, []byte("x"), 0o644)
	startup := time.Duration(1 << 62)
	for range 5 {
		t0 := time.Now()
		mustRun(t, 0, "retain", "--runs-dir", runs, "--run", "r0", "--call", "tiny", tiny)
		startup = min(startup, time.Since(t0))
	}
	var killed, finished, committed int
	stages := map[string]int{}
	for i := 0; i < iters; i++ {
		size := sizes[r.IntN(len(sizes))]
		comp := []string{"none", "zstd"}[r.IntN(2)]
		call := fmt.Sprintf("c%d", i)
		inputs[call] = data[size]
		cmd := exec.Command(retval, "retain", "--runs-dir", runs, "--run", fmt.Sprintf("r%d", i%3), "--call", call,
			"--compress", comp, "--threshold", "1KiB", "--max-value-size", "0", "--max-run-bytes", "0", "--max-run-values", "0", paths[size])
		cmd.Stdout = new(bytes.Buffer)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill somewhere between late in start-up and a little past the
		// expected end, so every stage gets hit.
		time.Sleep(startup*3/4 + time.Duration(r.Int64N(int64(time.Duration(size/(40<<10))*time.Millisecond+startup))))
		cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		if err == nil {
			finished++
		} else {
			killed++
		}
		checkValues(t, runs, inputs, map[string]bool{call: true})
		if err != nil {
			stages[killStage(t, filepath.Join(runs, fmt.Sprintf("r%d.values", i%3)), call)]++
		}
		// replay: the stub of a whole value, or the text verbatim.
		rep := exec.Command(retval, "replay", "--runs-dir", runs, "--run", fmt.Sprintf("r%d", i%3), "--call", call, paths[size])
		out, err := rep.Output()
		if err != nil {
			t.Fatalf("replay after kill: %v", err)
		}
		if bytes.HasPrefix(out, []byte("[retained #"+call+"]")) {
			committed++
		} else if !bytes.Equal(out, data[size]) {
			t.Fatalf("replay printed neither the stub nor the text (%d bytes)", len(out))
		}
	}
	values, debris := checkStore(t, runs, inputs)
	t.Logf("%d iterations: %d killed, %d finished; %d values whole, %d committed per replay, %d debris files, 0 lost",
		iters, killed, finished, values, committed, debris)
	t.Logf("start-up %v; what the kills left of their value: %v", startup, stages)
	if values != committed {
		t.Fatalf("%d descriptors but replay found %d stubs", values, committed)
	}

	// gc without a grace period removes what the kills left (temp files,
	// content without a descriptor) and nothing else; verify is then clean.
	var rep gcReport
	decode(t, mustRun(t, 0, "gc", "--runs-dir", runs, "--grace", "0s", "--json").stdout, &rep)
	if len(rep.Removed) != 0 || len(rep.Failed) != 0 || len(rep.Skipped) != 0 {
		t.Fatalf("gc after the kills: removed %v, skipped %v, failed %v", rep.Removed, rep.Skipped, rep.Failed)
	}
	var vr verifyReport
	decode(t, mustRun(t, 0, "verify", "--runs-dir", runs, "--grace", "0s", "--json").stdout, &vr)
	if vr.Values != committed || vr.Corrupt+vr.Missing+vr.Debris != 0 {
		t.Fatalf("verify after gc: %+v, want %d values and no problems", vr, committed)
	}
	if v, d := checkStore(t, runs, inputs); v != committed || d != 0 {
		t.Fatalf("after gc: %d values, %d debris files", v, d)
	}
	t.Logf("gc --grace 0s removed %d debris files; verify: %d values, 0 corrupt, 0 missing, 0 debris", len(rep.Debris), vr.Values)
}
