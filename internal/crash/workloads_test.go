package crash

import (
	"bytes"
	crand "crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// value is a value a workload's checks follow. Once the promise (stdout
// write) holding its marker was printed — at once when the marker is "" —
// it must read back as data, or, when collected, say collected (exit 3)
// and never be read again. Before that, a value gc collects reads whole
// or says collected; a value being retained may be anything, and replay
// shows its stub or the input unchanged.
type value struct {
	marker    string
	collected bool
	run, id   string
	data      []byte
	replay    bool // replay must rebuild the stub the workload printed
	after     int  // set by explore: the promises printed once marker was
}

// stubbed is a value the workload retains, shown by its stub.
func stubbed(id string, data []byte) value {
	return value{marker: "[retained #" + id + "]", run: "r", id: id, data: data, replay: true}
}

// workload is a command recorded under strace, and what its crash states
// must still hold.
type workload struct {
	name  string
	runs  string // the runs-dir, relative to the root
	setup func(t *testing.T, root string) []value
	args  func(root string) []string // the command recorded (argv[0] a path)
	// promised lists the values the recorded command retains (the
	// setup returns those it made before).
	promised func() []value
	// stub is the stub in what the command printed (nil: all of it).
	stub func(stdout []byte) ([]byte, error)
	// replay holds the settings under which `retval replay` rebuilds the
	// stub: at every crash point it must print that stub or the input
	// unchanged, and the stub once the stub was printed. nil: no stub.
	replay []string
	// wantStdout, when set, is what the command must print.
	wantStdout func() []byte
	noWrites   bool   // the command must write nothing under the root
	damaged    bool   // the store before is damaged: verify may fail until the first promise
	step       string // when set: ledger of run "r" whose lookups must be ≥ the answers printed
}

// stubOf is the stub the recorded command printed.
func (w *workload) stubOf(stdout []byte) ([]byte, error) {
	if w.stub == nil {
		return stdout, nil
	}
	return w.stub(stdout)
}

func random(n int) []byte {
	b := make([]byte, n)
	crand.Read(b)
	// Text: base64-like lines, so that stubs and line indexes are exercised.
	const abc = "abcdefghijklmnopqrstuvwxyz0123456789"
	for i := range b {
		b[i] = abc[int(b[i])%len(abc)]
		if i%80 == 79 {
			b[i] = '\n'
		}
	}
	return b
}

func writeInput(t *testing.T, dir string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, "in")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func run(t *testing.T, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(retval, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("retval %s: %v\n%s", args, err, out)
	}
	return out
}

// retainFlags are the settings of every retain the workloads make, which
// replay repeats to rebuild a stub.
var retainFlags = []string{"--threshold", "0"}

// retainWorkload retains n bytes into run r of runs (runs relative to the
// root; outside it the input, so that the root holds only the store).
func retainWorkload(name, runs string, n int, comp string, pre func(t *testing.T, root string)) workload {
	var data []byte
	var in string
	return workload{
		name: name, runs: runs, replay: retainFlags,
		setup: func(t *testing.T, root string) []value {
			data = random(n)
			in = writeInput(t, t.TempDir(), data)
			if pre != nil {
				pre(t, root)
			}
			return nil
		},
		args: func(root string) []string {
			return append([]string{retval, "retain", "--runs-dir", filepath.Join(root, runs), "--run", "r",
				"--call", "v", "--compress", comp, in}, retainFlags...)
		},
		promised: func() []value { return []value{stubbed("v", data)} },
	}
}

func workloads() []workload {
	small := retainWorkload("retain-small", "runs", 300, "none", mkdir("runs"))
	big := retainWorkload("retain-2MiB", "runs", 2<<20, "none", mkdir("runs"))
	zst := retainWorkload("retain-2MiB-zstd", "runs", 2<<20, "zstd", mkdir("runs"))
	fresh := retainWorkload("retain-new-runs-dir", "a/b/runs", 4000, "none", nil)
	restore := retainWorkload("retain-restore", "runs", 5000, "none", nil)
	restore.damaged = true
	restore.setup = chain(restore.setup, func(t *testing.T, root string) {
		// The same bytes retained before, their content since lost.
		runs := filepath.Join(root, "runs")
		os.Mkdir(runs, 0o700)
		run(t, restore.args(root)[1:]...)
		if err := os.Remove(filepath.Join(runs, "r.values", "v.txt")); err != nil {
			t.Fatal(err)
		}
	})
	return []workload{small, big, zst, fresh, restore, execWorkload(), hookWorkload(), stepWorkload(),
		gcWorkload(), gcRaceWorkload(), replayWorkload()}
}

func mkdir(rel string) func(t *testing.T, root string) {
	return func(t *testing.T, root string) { os.MkdirAll(filepath.Join(root, rel), 0o700) }
}

func chain(a func(*testing.T, string) []value, b func(*testing.T, string)) func(*testing.T, string) []value {
	return func(t *testing.T, root string) []value { v := a(t, root); b(t, root); return v }
}

// execWorkload: retval exec of a command printing 1 MiB.
func execWorkload() workload {
	var data []byte
	var in string
	return workload{
		name: "exec-1MiB", runs: "runs", replay: append([]string{"--read-more", "shell"}, retainFlags...),
		setup: func(t *testing.T, root string) []value {
			os.Mkdir(filepath.Join(root, "runs"), 0o700)
			data = random(1 << 20)
			in = writeInput(t, t.TempDir(), data)
			return nil
		},
		args: func(root string) []string {
			return []string{retval, "exec", "--runs-dir", filepath.Join(root, "runs"), "--run", "r",
				"--call", "v", "--threshold", "0", "--", "cat", in}
		},
		promised: func() []value { return []value{stubbed("v", data)} },
	}
}

// hookWorkload: Claude Code's PostToolUse hook with a Bash result of
// 200 KB; the promise is the hook's answer on stdout, whose stub the
// model is shown instead of the output.
func hookWorkload() workload {
	var data []byte
	var in, home string
	return workload{
		name: "hook-claude-code", runs: "runs", replay: []string{"--read-more", "shell"},
		setup: func(t *testing.T, root string) []value {
			os.Mkdir(filepath.Join(root, "runs"), 0o700)
			data = random(200 << 10)
			dir := t.TempDir()
			home = filepath.Join(dir, "home")
			os.Mkdir(home, 0o700)
			b, err := json.Marshal(map[string]any{
				"session_id": "r", "transcript_path": "/nonexistent.jsonl", "cwd": dir,
				"hook_event_name": "PostToolUse", "tool_use_id": "v", "tool_name": "Bash",
				"tool_input":    map[string]any{"command": "cat big"},
				"tool_response": map[string]any{"stdout": string(data), "stderr": "", "interrupted": false, "isImage": false},
			})
			if err != nil {
				t.Fatal(err)
			}
			in = writeInput(t, dir, b)
			return nil
		},
		args: func(root string) []string {
			// The hook's store and settings come from its environment, as
			// Claude Code runs it: nothing of the user's.
			// (The mutation run's switch is passed on.)
			return []string{"/bin/sh", "-c", fmt.Sprintf(`exec env -i HOME=%s PATH=/usr/bin:/bin RETVAL_RUNS_DIR=%s ${RETVAL_TEST_SKIP_FSYNC:+RETVAL_TEST_SKIP_FSYNC=$RETVAL_TEST_SKIP_FSYNC} %s hook claude-code < %s`,
				home, filepath.Join(root, "runs"), retval, in)}
		},
		promised: func() []value { return []value{stubbed("v", data)} },
		stub: func(stdout []byte) ([]byte, error) {
			var a struct {
				HookSpecificOutput struct {
					UpdatedToolOutput struct{ Stdout string } `json:"updatedToolOutput"`
				} `json:"hookSpecificOutput"`
			}
			if err := json.Unmarshal(stdout, &a); err != nil {
				return nil, fmt.Errorf("the hook's answer: %v", err)
			}
			return []byte(a.HookSpecificOutput.UpdatedToolOutput.Stdout), nil
		},
	}
}

// gcWorkload: gc collecting three idle runs (setup retains one value in
// each; the clock moved by --max-age 1ns). Once gc printed that it
// removed them, each says collected.
func gcWorkload() workload {
	return workload{
		name: "gc-idle-runs", runs: "runs",
		setup: func(t *testing.T, root string) []value {
			vs := idleRuns(t, filepath.Join(root, "runs"), "old0", "old1", "old2")
			for i := range vs {
				vs[i].marker, vs[i].collected = "removed 3 runs", true
			}
			return vs
		},
		args: func(root string) []string {
			return []string{retval, "gc", "--runs-dir", filepath.Join(root, "runs"), "--max-age", "1ns", "--grace", "0s"}
		},
		promised: func() []value { return nil },
	}
}

// gcOneWorkload: gc collecting one idle run. Its syncs come in one order
// (with several runs, gc's workers interleave theirs), so the mutation
// run can say which of them each mutant leaves out.
func gcOneWorkload() workload {
	w := gcWorkload()
	w.name = "gc-one-run"
	w.setup = func(t *testing.T, root string) []value {
		vs := idleRuns(t, filepath.Join(root, "runs"), "old0")
		vs[0].marker, vs[0].collected = "removed 1 run", true
		return vs
	}
	return w
}

// idleRuns makes runs holding one value v each.
func idleRuns(t *testing.T, runs string, names ...string) []value {
	t.Helper()
	os.MkdirAll(runs, 0o700)
	var vs []value
	for i, r := range names {
		d := random(3000 + i)
		in := writeInput(t, t.TempDir(), d)
		run(t, append([]string{"retain", "--runs-dir", runs, "--run", r, "--call", "v", in}, retainFlags...)...)
		vs = append(vs, value{run: r, id: "v", data: d})
	}
	return vs
}

// gcRaceWorkload: gc runs while a retain into run r holds r's lock — the
// retain has read the first part of its input and waits for the rest;
// gc collects the idle run old0 and must leave r alone (its value v
// reads whole throughout); then the retain reads the rest, commits v2 and
// prints its stub. The workload drives the interleaving: a FIFO holds the
// retain back until gc is done.
func gcRaceWorkload() workload {
	var data []byte
	var dir string
	return workload{
		name: "gc-racing-retain", runs: "runs", replay: retainFlags,
		setup: func(t *testing.T, root string) []value {
			vs := idleRuns(t, filepath.Join(root, "runs"), "old0", "r")
			vs[0].marker, vs[0].collected = "removed 1 run", true
			data = random(300 << 10)
			dir = t.TempDir()
			writeInput(t, dir, data)
			return vs
		},
		args: func(root string) []string {
			runs := filepath.Join(root, "runs")
			script := strings.Join([]string{
				`set -e`,
				`mkfifo "$D/fifo"`,
				`"$RETVAL" retain --runs-dir "$RUNS" --run r --call v2 --threshold 0 < "$D/fifo" &`,
				`exec 3> "$D/fifo"`,
				`head -c 100000 "$D/in" >&3`,
				// The retain holds r's lock once its temporary file is there.
				`until ls -a "$RUNS/r.values" | grep -q '^\.tmp-v2-'; do sleep 0.01; done`,
				`"$RETVAL" gc --runs-dir "$RUNS" --max-age 1ns --grace 0s`,
				`tail -c +100001 "$D/in" >&3`,
				`exec 3>&-`,
				`wait $!`,
			}, "\n")
			return []string{"/usr/bin/env", "D=" + dir, "RUNS=" + runs, "RETVAL=" + retval, "/bin/sh", "-c", script}
		},
		promised: func() []value { return []value{stubbed("v2", data)} },
		// gc's summary comes first.
		stub: func(stdout []byte) ([]byte, error) {
			i := bytes.Index(stdout, []byte("[retained #"))
			if i < 0 {
				return nil, fmt.Errorf("no stub")
			}
			return stdout[i:], nil
		},
	}
}

// replayWorkload: replay of a retained value rebuilds the stub retain
// printed, and writes nothing.
func replayWorkload() workload {
	var data, stub []byte
	var in string
	return workload{
		name: "replay", runs: "runs", replay: retainFlags, noWrites: true,
		setup: func(t *testing.T, root string) []value {
			runs := filepath.Join(root, "runs")
			os.Mkdir(runs, 0o700)
			data = random(5000)
			in = writeInput(t, t.TempDir(), data)
			stub = run(t, append([]string{"retain", "--runs-dir", runs, "--run", "r", "--call", "v", in}, retainFlags...)...)
			return nil
		},
		args: func(root string) []string {
			return []string{"/bin/sh", "-c", fmt.Sprintf(`exec %s replay --runs-dir %s --run r --call v %s < %s`,
				retval, filepath.Join(root, "runs"), strings.Join(retainFlags, " "), in)}
		},
		promised:   func() []value { return []value{stubbed("v", data)} },
		wantStdout: func() []byte { return stub },
	}
}

// stepWorkload: ten `resolve --step s` calls on one step, two past its
// budget of eight lookups.
func stepWorkload() workload {
	return workload{
		name: "resolve-step", runs: "runs", step: "s",
		setup: func(t *testing.T, root string) []value {
			runs := filepath.Join(root, "runs")
			os.Mkdir(runs, 0o700)
			in := writeInput(t, t.TempDir(), random(2000))
			run(t, "retain", "--runs-dir", runs, "--run", "r", "--call", "v", "--threshold", "0", in)
			return nil
		},
		args: func(root string) []string {
			return []string{"/bin/sh", "-c", fmt.Sprintf(`for i in 1 2 3 4 5 6 7 8 9 10; do %s resolve --runs-dir %s --run r v --lines 1-1 --step s; done; true`,
				retval, filepath.Join(root, "runs"))}
		},
		promised: func() []value { return nil },
	}
}
