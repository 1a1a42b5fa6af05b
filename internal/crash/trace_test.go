package crash

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// The parser's tests feed it logs in strace's -f -y -X raw -xx form,
// written with x (a string as -xx prints it) and fd (an fd as -y does).

const testRoot = "/r"

func x(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		b.WriteString(`\x` + hex.EncodeToString([]byte{c}))
	}
	return b.String()
}

func fd(n int, path string) string { return fmt.Sprintf("%d<%s>", n, x(path)) }

// parseLog parses log over a root holding the directory d and returns its
// operations as strings.
func parseLog(t *testing.T, log string) ([]string, error) {
	t.Helper()
	fs := &FS{ino: map[int]*inode{rootIno: {dir: true, entries: map[string]int{"d": 2}}, 2: {dir: true, entries: map[string]int{}}}, next: 3}
	p := &parser{root: testRoot, cwd: testRoot, stdout: "/out", fs: fs, tables: map[string]fdTable{}}
	err := p.parse(log)
	var ops []string
	for _, op := range p.ops {
		ops = append(ops, op.String())
	}
	return ops, err
}

func wantOps(t *testing.T, log string, want ...string) {
	t.Helper()
	got, err := parseLog(t, log)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("operations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A resumed call's result is padded to strace's result column: the call
// is still whole (it was once dropped, and the file it opened was then
// missing from the model when a write named it).
func TestParseResumedCall(t *testing.T) {
	log := `10 openat(` + fd(3, "/r/d") + `, "` + x("f") + `", 0xa08c1, 0600 <unfinished ...>
11 write(` + fd(1, "/out") + `, "` + x("ok") + `", 2) = 2
10 <... openat resumed>)             = ` + fd(4, "/r/d/f") + `
10 write(` + fd(4, "/r/d/f") + `, "` + x("hello") + `", 5 <unfinished ...>
11 fsync(` + fd(9, "/elsewhere") + `) = 0
10 <... write resumed>)              = 5
`
	wantOps(t, log,
		`create d/f`,
		`promise "ok"`,
		`write d/f [0,+5)`)
}

// A thread let go of in a call, as its process exits, shows as "???(
// <detached ...>", its call never resumed: nothing to apply.
func TestParseDetached(t *testing.T) {
	log := `10 fsync(` + fd(9, "/elsewhere") + ` <unfinished ...>
11 openat(-100<` + x("/r") + `>, "` + x("d/f") + `", 0x41, 0600) = ` + fd(4, "/r/d/f") + `
10 ???( <detached ...>
12 ???( <detached ...>
`
	wantOps(t, log, `create d/f`)
}

// A call's effect is taken at its start: a thread may be logged returning
// from mkdirat after another thread made a file in the new directory.
func TestParseEffectsAtStart(t *testing.T) {
	log := `10 mkdirat(` + fd(3, "/r") + `, "` + x("n") + `", 0700 <unfinished ...>
11 openat(-100<` + x("/r") + `>, "` + x("n/f") + `", 0xa08c1, 0600) = ` + fd(5, "/r/n/f") + `
11 write(` + fd(5, "/r/n/f") + `, "` + x("abc") + `", 3) = 3
10 <... mkdirat resumed>)            = 0
`
	wantOps(t, log, `mkdir n`, `create n/f`, `write n/f [0,+3)`)
}

// An fd is taken at the end of the call that returned it: a thread's
// open may return the number another thread closed after the open began.
func TestParseFdReuse(t *testing.T) {
	log := `10 openat(` + fd(3, "/r/d") + `, "` + x("a") + `", 0xa08c1, 0600) = ` + fd(5, "/r/d/a") + `
10 openat(` + fd(3, "/r/d") + `, "` + x("b") + `", 0xa08c1, 0600 <unfinished ...>
11 close(` + fd(5, "/r/d/a") + `) = 0
10 <... openat resumed>)             = ` + fd(5, "/r/d/b") + `
11 write(` + fd(5, "/r/d/b") + `, "` + x("x") + `", 1) = 1
12 close(` + fd(5, "/r/d/b") + ` <unfinished ...>
10 openat(` + fd(3, "/r/d") + `, "` + x("c") + `", 0xa08c1, 0600) = ` + fd(5, "/r/d/c") + `
12 <... close resumed>)              = 0
10 write(` + fd(5, "/r/d/c") + `, "` + x("y") + `", 1) = 1
`
	// Threads 11 and 12 share 10's fds: they were cloned with CLONE_FILES.
	log = `10 clone3({flags=0x3d0f00, exit_signal=0} => {parent_tid=[11]}, 88) = 11
10 clone3({flags=0x3d0f00, exit_signal=0} => {parent_tid=[12]}, 88) = 12
` + log
	wantOps(t, log, `create d/a`, `create d/b`, `write d/b [0,+1)`, `create d/c`, `write d/c [0,+1)`)
}

// A write through an fd lands in the inode the open found, wherever its
// entry went since and whatever -y shows.
func TestParseFdFollowsInode(t *testing.T) {
	log := `10 openat(` + fd(3, "/r/d") + `, "` + x("t") + `", 0xa08c1, 0600) = ` + fd(4, "/r/d/t") + `
10 write(` + fd(4, "/r/d/t") + `, "` + x("12") + `", 2) = 2
10 renameat(` + fd(3, "/r/d") + `, "` + x("t") + `", ` + fd(3, "/r/d") + `, "` + x("v") + `") = 0
10 write(` + fd(4, "/r/d/v") + `, "` + x("34") + `", 2) = 2
10 unlinkat(` + fd(3, "/r/d") + `, "` + x("v") + `", 0) = 0
10 write(` + fd(4, "/r/d/v (deleted)") + `, "` + x("5") + `", 1) = 1
10 lseek(` + fd(4, "/r/d/v (deleted)") + `, 0, 0) = 0
10 write(` + fd(4, "/r/d/v (deleted)") + `, "` + x("6") + `", 1) = 1
10 fsync(` + fd(4, "/r/d/v (deleted)") + `) = 0
`
	wantOps(t, log, `create d/t`, `write d/t [0,+2)`, `rename d/t → v`, `write d/v [2,+2)`, `unlink d/v`,
		`write ?3 [4,+1)`, `write ?3 [0,+1)`, `fsync ?3`)
}

// A forked child has a copy of its parent's fds: its close leaves the
// parent's; exec closes those opened O_CLOEXEC.
func TestParseForkExec(t *testing.T) {
	log := `10 openat(` + fd(3, "/r/d") + `, "` + x("k") + `", 0x80041, 0600) = ` + fd(6, "/r/d/k") + `
10 openat(` + fd(3, "/r/d") + `, "` + x("l") + `", 0x41, 0600) = ` + fd(7, "/r/d/l") + `
10 clone(child_stack=NULL, flags=0x5100|17 <unfinished ...>
20 close(` + fd(6, "/r/d/k") + `) = 0
20 write(` + fd(7, "/r/d/l") + `, "` + x("c") + `", 1) = 1
20 execve("` + x("/bin/sh") + `", [], 0x0 /* 0 vars */ <unfinished ...>
10 <... clone resumed>)              = 20
10 write(` + fd(6, "/r/d/k") + `, "` + x("p") + `", 1) = 1
20 <... execve resumed>)             = 0
20 write(` + fd(7, "/r/d/l") + `, "` + x("d") + `", 1) = 1
`
	wantOps(t, log, `create d/k`, `create d/l`, `write d/l [0,+1)`, `write d/k [0,+1)`, `write d/l [1,+1)`)
	closed := log + `20 write(` + fd(6, "/r/d/k") + `, "` + x("q") + `", 1) = 1
`
	if _, err := parseLog(t, closed); err == nil || !strings.Contains(err.Error(), "not opened in the trace") {
		t.Fatalf("a write through an fd exec closed: %v, want an error", err)
	}
}

// What the model cannot follow is an error, never a silent gap.
func TestParseRefusesWhatItCannotModel(t *testing.T) {
	for name, log := range map[string]string{
		"unknown fd":        `10 write(` + fd(8, "/r/d/z") + `, "` + x("a") + `", 1) = 1` + "\n",
		"missing parent":    `10 unlinkat(-100<` + x("/r") + `>, "` + x("nope/f") + `", 0) = 0` + "\n",
		"missing file":      `10 unlinkat(` + fd(3, "/r/d") + `, "` + x("f") + `", 0) = 0` + "\n",
		"writev":            `10 openat(-100<` + x("/r") + `>, "` + x("d/f") + `", 0x41, 0600) = ` + fd(4, "/r/d/f") + "\n" + `10 writev(` + fd(4, "/r/d/f") + `, [], 0) = 0` + "\n",
		"symlink":           `10 symlinkat("` + x("/etc") + `", -100<` + x("/r") + `>, "` + x("d/s") + `") = 0` + "\n",
		"resumed, no start": `10 <... openat resumed>) = 3` + "\n",
	} {
		if _, err := parseLog(t, log); err == nil {
			t.Errorf("%s: parsed, want an error", name)
		}
	}
}
