package inspector

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/retval/retval/internal/e2e/e2etest"
)

// TestMeasure records the figures of docs/mcp.md: the wall time of a
// tools/call through the proxy and directly, the proxy's memory while
// relaying 20 MB, and a retval_peek call against a peek process. It
// measures, and asserts nothing about time: it runs only with
// RETVAL_E2E_MEASURE=1.
func TestMeasure(t *testing.T) {
	if os.Getenv("RETVAL_E2E_MEASURE") != "1" {
		t.Skip("set RETVAL_E2E_MEASURE=1 to measure")
	}
	insp := e2etest.Bin(t, inspectorPackage, "mcp-inspector")
	fsBin := e2etest.Bin(t, fsPackage, "mcp-server-filesystem")
	retval := e2etest.BuildRetval(t, t.TempDir())
	s := e2etest.NewSession(t, retval)
	dir := filepath.Join(s.Proj, "files")
	os.MkdirAll(dir, 0o755)
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big := write("big.txt", e2etest.FileText(100<<10))
	small := write("small.txt", strings.Repeat("x", 99)+"\n")
	huge := write("huge.txt", e2etest.FileText(20<<20))

	run := func(server []string, file string) time.Duration {
		cmd := exec.Command(insp, append([]string{"--cli", "--method", "tools/call", "--tool-name", "read_text_file", "--tool-arg", "path=" + file, "--"}, server...)...)
		cmd.Env, cmd.Dir = s.Env(), s.Proj
		t0 := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return time.Since(t0)
	}
	direct := []string{fsBin, dir}
	proxied := append([]string{retval, "mcp", "proxy", "--run", "m", "--"}, direct...)
	for _, f := range []struct{ name, path string }{{"100 KB", big}, {"100 B", small}} {
		var d, p []time.Duration
		for range 20 {
			d = append(d, run(direct, f.path))
			p = append(p, run(proxied, f.path))
		}
		t.Logf("inspector tools/call read_text_file %s: direct %v, through the proxy %v (median of 20)", f.name, median(d), median(p))
	}

	// The proxy's peak RSS relaying a 20 MB result: retained (max-value-size
	// raised) and relayed whole (the default 16 MiB bound).
	for _, extra := range [][]string{{"--max-value-size", "64MiB"}, nil} {
		args := append(append([]string{"mcp", "proxy", "--run", "m"}, extra...), "--", fsBin, dir)
		cmd := exec.Command(retval, args...)
		cmd.Env, cmd.Dir = s.Env(), s.Proj
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "m"}, nil).Connect(ctx, &mcp.IOTransport{Reader: out, Writer: in, MaxLineLength: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": huge}})
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(t0)
		b, _ := json.Marshal(res)
		t.Logf("20 MB read_text_file %v: %d bytes to the client in %v, proxy peak RSS %s", extra, len(b), took, vmHWM(t, cmd.Process.Pid))
		cs.Close()
		cancel()
		cmd.Wait()
	}

	// retval_peek in mcp serve against a process per read.
	store := s.StoreDir()
	val := write("val.txt", e2etest.FileText(100<<10))
	retain := exec.Command(retval, "retain", "--runs-dir", store, "--run", "m", "--call", "v1", val)
	if out, err := retain.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	cmd := exec.Command(retval, "mcp", "serve", "--runs-dir", store, "--run", "m")
	cmd.Env = s.Env()
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "m"}, nil).Connect(ctx, &mcp.IOTransport{Reader: out, Writer: in}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var calls []time.Duration
	for range 1000 {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "retval_peek", Arguments: map[string]any{"id": "v1", "lines": "120-160"}})
		calls = append(calls, time.Since(t0))
		if err != nil || res.IsError {
			t.Fatal(err, res)
		}
	}
	cs.Close()
	cmd.Wait()
	proc := func(name string, args ...string) time.Duration {
		var ds []time.Duration
		for range 50 {
			c := exec.Command(name, args...)
			c.Env = s.Env()
			t0 := time.Now()
			if out, err := c.CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			ds = append(ds, time.Since(t0))
		}
		return median(ds)
	}
	t.Logf("40 lines of a 100 KB value: retval_peek in mcp serve %v (median of 1000 calls over stdio), a retval peek process %v, a sed -n process %v (medians of 50)",
		median(calls), proc(retval, "peek", "--runs-dir", store, "--run", "m", "v1", "--lines", "120-160"), proc("sed", "-n", "120,160p", val))
}

func median(ds []time.Duration) time.Duration {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// vmHWM is the peak resident set of process pid, from /proc.
func vmHWM(t *testing.T, pid int) string {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
