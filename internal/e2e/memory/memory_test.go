// Package memory holds retval's memory bounds to account with the real
// binary: the MCP proxy relaying a 20 MB tools/call result peaks under
// three times the frame, and a 100 MB frame is relayed, never the end of
// the proxy. Peak RSS is GNU time's (%M): the rusage Go's os/exec reports
// for a child would count this test process's own peak too, as the child
// shares its memory until exec.
package memory

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retval/retval/internal/e2e/e2etest"
)

const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{}}}` + "\n"

// response writes a tools/call result of a text of n bytes (64-byte
// lines), with structuredContent repeating it when sc, to a file, and
// returns its path and size.
func response(t *testing.T, dir string, n int, sc bool) (string, int64) {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("resp-%d-%v.json", n, sc))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	line := strings.Repeat("0123456789abcdef", 4)[:63] + `\n` // the JSON of 64 bytes
	text := func() {
		w.WriteString(`"`)
		for i := 0; i < n/64; i++ {
			w.WriteString(line)
		}
		w.WriteString(`"`)
	}
	w.WriteString(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":`)
	text()
	w.WriteString(`}]`)
	if sc {
		w.WriteString(`,"structuredContent":{"content":`)
		text()
		w.WriteString(`}`)
	}
	w.WriteString("}}\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	f.Close()
	return path, fi.Size()
}

// relay runs one tools/call through retval mcp proxy, the server
// answering with the file resp, and returns the answer's first bytes, its
// length and SHA-256, and the peak RSS in bytes.
func relay(t *testing.T, retval, runs, resp string, args ...string) (head []byte, n int64, sum [32]byte, rss int64) {
	t.Helper()
	server := fmt.Sprintf("read line; cat %q; read rest; exit 0", resp)
	cmd, peak := measured(t, retval, append(append([]string{"mcp", "proxy", "--run", "mem"}, args...), "--", "sh", "-c", server)...)
	cmd.Env = append(os.Environ(), "RETVAL_RUNS_DIR="+runs, "XDG_CONFIG_HOME="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, call)
	// The answer is one line, read as it streams; then the client is done.
	h := sha256.New()
	r := bufio.NewReaderSize(stdout, 1<<20)
	for {
		chunk, err := r.ReadSlice('\n')
		if len(head) < 8192 {
			head = append(head, chunk[:min(len(chunk), 8192-len(head))]...)
		}
		h.Write(chunk)
		n += int64(len(chunk))
		if err != bufio.ErrBufferFull {
			break
		}
	}
	stdin.Close()
	io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("proxy: %v\n%s", err, stderr.Bytes())
	}
	h.Sum(sum[:0])
	return head, n, sum, peak()
}

// measured is the command retval args run under GNU time, and a function
// that returns its peak RSS in bytes once it has ended.
func measured(t *testing.T, retval string, args ...string) (*exec.Cmd, func() int64) {
	t.Helper()
	gnuTime := "/usr/bin/time"
	if _, err := os.Stat(gnuTime); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("GNU time is not installed: %v", err)
		}
		t.Skipf("GNU time is not installed: %v", err)
	}
	out := filepath.Join(t.TempDir(), "rss")
	cmd := exec.Command(gnuTime, append([]string{"-f", "%M", "-o", out, retval}, args...)...)
	return cmd, func() int64 {
		b, err := os.ReadFile(out)
		var kb int64
		if _, serr := fmt.Sscan(string(b), &kb); err != nil || serr != nil {
			t.Fatalf("GNU time's figure %q: %v %v", b, err, serr)
		}
		return kb << 10
	}
}

func TestProxyMemory(t *testing.T) {
	dir := t.TempDir()
	retval := e2etest.BuildRetval(t, dir)
	const mb = 1000 * 1000
	for _, tc := range []struct {
		name string
		n    int
		sc   bool
		args []string
	}{
		{"20 MB text, retained", 20 * mb, false, []string{"--max-value-size", "64MiB"}},
		{"20 MB text and structuredContent (a 40 MB frame), retained", 20 * mb, true, []string{"--max-value-size", "64MiB"}},
		{"100 MB text, relayed whole (over max-value-size)", 100 * mb, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, size := response(t, dir, tc.n, tc.sc)
			head, n, sum, rss := relay(t, retval, filepath.Join(dir, "runs"), resp, tc.args...)
			t.Logf("frame %d bytes, peak RSS %d bytes (%.2f× the frame)", size, rss, float64(rss)/float64(size))
			if rss > 3*size {
				t.Errorf("peak RSS %d bytes is over 3× the %d-byte frame", rss, size)
			}
			if tc.args == nil {
				f, _ := os.ReadFile(resp)
				if n != size || sum != sha256.Sum256(f) {
					t.Errorf("the frame was not relayed whole: %d bytes of %d", n, size)
				}
				return
			}
			var ans struct {
				Result struct {
					Content []struct{ Text string } `json:"content"`
				} `json:"result"`
			}
			if n > 4096 || json.Unmarshal(head, &ans) != nil || len(ans.Result.Content) == 0 ||
				!strings.HasPrefix(ans.Result.Content[0].Text, "[retained #") ||
				!strings.Contains(ans.Result.Content[0].Text, fmt.Sprintf("] %d bytes, ", tc.n)) {
				t.Errorf("the answer (%d bytes) is not a stub: %.300s", n, head)
			}
		})
	}
}

// The Claude Code hook reading a 16 MiB Bash result peaks under three
// times its input, and retains the whole output.
func TestHookMemory(t *testing.T) {
	dir := t.TempDir()
	retval := e2etest.BuildRetval(t, dir)
	input, size, sum := hookInput(t, dir)
	f, err := os.Open(input)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd, peak := measured(t, retval, "hook", "claude-code", "--max-value-size", "64MiB")
	cmd.Env = append(os.Environ(), "RETVAL_RUNS_DIR="+filepath.Join(dir, "runs"), "XDG_CONFIG_HOME="+t.TempDir())
	cmd.Stdin = f
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hook: %v", err)
	}
	rss := peak()
	t.Logf("input %d bytes, peak RSS %d bytes (%.2f× the input)", size, rss, float64(rss)/float64(size))
	if rss > 3*size {
		t.Errorf("peak RSS %d bytes is over 3× the %d-byte input", rss, size)
	}
	if !bytes.Contains(out, []byte(`[retained #toolu_big] 16777216 bytes, 262144 lines, sha256:`+sum)) {
		t.Errorf("the answer is not the whole output's stub: %.300s", out)
	}
}

// hookInput writes a PostToolUse input of a 16 MiB Bash stdout to a file
// and returns its path, its size and the output's SHA-256.
func hookInput(t *testing.T, dir string) (string, int64, string) {
	stdout := strings.Repeat(strings.Repeat("x", 63)+"\n", 16<<20/64)
	in, err := json.Marshal(map[string]any{
		"session_id": "mem", "transcript_path": filepath.Join(dir, "t.jsonl"), "cwd": dir, "permission_mode": "default",
		"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": map[string]any{"command": "make"},
		"tool_response": map[string]any{"stdout": stdout, "stderr": "", "interrupted": false, "isImage": false},
		"tool_use_id":   "toolu_big",
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "hook-input.json")
	if err := os.WriteFile(path, in, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, int64(len(in)), e2etest.SHA([]byte(stdout))
}
