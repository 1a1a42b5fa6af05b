//go:build linux

package reliability

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// maxRSSMiB is the bound on any one command's peak memory here: a few MiB
// of buffers over the Go runtime, far below the inputs.
const maxRSSMiB = 48

// TestHostileInputMemory runs each command on inputs built to make it
// hold too much — a 16 MiB line, JSON nested 200,000 deep, a 64 MiB value,
// a zstd frame that inflates to 64 MiB — and checks that its peak
// resident memory stays under maxRSSMiB and that it answers (an error
// where one is due).
func TestHostileInputMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector multiplies memory use")
	}
	// The peak is measured by time(1): a child started straight from this
	// (large) test process would report this process's peak as its own,
	// because exec records the old address space's high-water mark.
	timeBin, err := exec.LookPath("/usr/bin/time")
	if err != nil {
		t.Skip("no /usr/bin/time to measure peak memory with")
	}
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	line := write("line", bytes.Repeat([]byte("a"), 16<<20))
	deep := write("deep", []byte(strings.Repeat("[", 200000)+"1"+strings.Repeat("]", 200000)))
	var big bytes.Buffer
	for i := 0; big.Len() < 64<<20; i++ {
		fmt.Fprintf(&big, "line %d of a big value %s\n", i, strings.Repeat("b", i%100))
	}
	bigp := write("big", big.Bytes())
	bomb := write("bombsrc", bytes.Repeat([]byte("x"), 100<<10))
	peak := map[string]int64{}
	run := func(name string, want int, args ...string) []byte {
		t.Helper()
		report := filepath.Join(dir, "time.out")
		cmd := exec.Command(timeBin, append([]string{"-f", "%M", "-o", report, retval}, append(args, "--runs-dir", runs)...)...)
		// zstd compresses on every core, each with its encoder (retain
		// of 64 MiB: 30 MiB on 1 core, 39 on 2, 46 on 4, 63 on 8): fix
		// the core count so the bound means the same on every machine.
		cmd.Env = append(os.Environ(), "GOMAXPROCS=2")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.Run()
		if cmd.ProcessState.ExitCode() != want {
			t.Fatalf("%s: exit %d, want %d: %s", name, cmd.ProcessState.ExitCode(), want, errb.Bytes())
		}
		kib, err := os.ReadFile(report)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(kib)), "\n")
		rss, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
		if err != nil {
			t.Fatalf("time(1) said %q", kib)
		}
		rss /= 1024 // KiB → MiB
		peak[name] = rss
		if rss > maxRSSMiB {
			t.Errorf("%s: peak memory %d MiB, over %d MiB", name, rss, maxRSSMiB)
		}
		return out.Bytes()
	}
	huge := []string{"--max-value-size", "0", "--max-run-bytes", "0", "--threshold", "0"}
	run("retain 16 MiB line", 0, append([]string{"retain", "--run", "r", "--call", "line", line}, huge...)...)
	run("retain 16 MiB line zstd", 0, append([]string{"retain", "--run", "r", "--call", "linez", "--compress", "zstd", line}, huge...)...)
	run("retain 64 MiB", 0, append([]string{"retain", "--run", "r", "--call", "big", bigp}, huge...)...)
	run("retain 64 MiB zstd", 0, append([]string{"retain", "--run", "r", "--call", "bigz", "--compress", "zstd", bigp}, huge...)...)
	run("retain deep JSON", 0, append([]string{"retain", "--run", "r", "--call", "deep", deep}, huge...)...)
	run("peek 16 MiB line", 0, "peek", "--run", "r", "line")
	run("peek 16 MiB line zstd", 0, "peek", "--run", "r", "linez")
	run("peek --query 16 MiB line", 0, "peek", "--run", "r", "line", "--query", "ab")
	run("peek --regex 16 MiB line", 0, "peek", "--run", "r", "line", "--query", "a+b", "--regex")
	run("peek last lines of 64 MiB", 0, "peek", "--run", "r", "big", "--lines", "867000-867369")
	run("peek last lines of 64 MiB zstd", 0, "peek", "--run", "r", "bigz", "--lines", "867000-867369")
	run("resolve 16 MiB line whole", 7, "resolve", "--run", "r", "line")
	run("resolve 16 MiB line --lines", 7, "resolve", "--run", "r", "line", "--lines", "1-1")
	run("resolve end of 16 MiB line", 0, "resolve", "--run", "r", "line", "--bytes", "16777000-16777216")
	run("resolve deep pointer", 7, "resolve", "--run", "r", "deep", "--pointer", "/0/0/0")
	run("resolve deep root", 7, "resolve", "--run", "r", "deep", "--pointer", "")
	run("verify 64 MiB values", 0, "verify", "--run", "r")
	run("catalogue", 0, "catalogue", "--run", "r")

	// The bomb: one frame of 64 MiB of zeros behind a seek table that says
	// 100 KiB.
	run("retain bomb base", 0, append([]string{"retain", "--run", "z", "--call", "v", "--compress", "zstd", bomb}, huge...)...)
	enc, _ := zstd.NewWriter(nil)
	frame := enc.EncodeAll(make([]byte, 64<<20), nil)
	forgeBomb(t, filepath.Join(runs, "z.values"), "v", frame, 100<<10)
	run("peek bomb", 1, "peek", "--run", "z", "v")
	run("resolve bomb", 1, "resolve", "--run", "z", "v", "--bytes", "0-10")
	run("verify bomb", 1, "verify", "--run", "z")
	var names []string
	for n, v := range peak {
		names = append(names, fmt.Sprintf("%s %d", n, v))
	}
	sort.Strings(names)
	t.Logf("peak memory (MiB): %s", strings.Join(names, "; "))
}

// forgeBomb replaces value id's zstd content with frame behind a one-entry
// seek table claiming size bytes, and sets the descriptor's stored_bytes.
func forgeBomb(t *testing.T, runDir, id string, frame []byte, size uint32) {
	t.Helper()
	le := func(b []byte, v uint32) []byte { return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24)) }
	var table []byte
	table = le(table, 0x184D2A5E)
	table = le(table, 8+9)
	table = le(table, uint32(len(frame)))
	table = le(table, size)
	table = le(table, 1)
	table = append(table, 0)
	table = le(table, 0x8F92EAB1)
	forged := append(append([]byte{}, frame...), table...)
	content := filepath.Join(runDir, id+".txt.zst")
	os.Chmod(content, 0o600)
	if err := os.WriteFile(content, forged, 0o600); err != nil {
		t.Fatal(err)
	}
	meta := filepath.Join(runDir, id+".meta.json")
	b, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte(`"stored_bytes":`))
	if i < 0 {
		t.Fatalf("no stored_bytes in %s", b)
	}
	j := i + bytes.IndexAny(b[i:], ",}\n")
	b = append(append(append([]byte{}, b[:i]...), fmt.Sprintf(`"stored_bytes": %d`, len(forged))...), b[j:]...)
	os.Chmod(meta, 0o600)
	if err := os.WriteFile(meta, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
