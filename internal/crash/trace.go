package crash

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Kind is what a logical file-system operation does.
type Kind int

const (
	OpCreate   Kind = iota // a new empty file: entry Name in Dir → Ino
	OpMkdir                // a new directory: entry Name in Dir → Ino
	OpWrite                // Data at Off of file Ino
	OpTruncate             // file Ino cut or extended to Off bytes
	OpRename               // entry Name of Dir (Ino) moved to Name2 of Dir2
	OpLink                 // entry Name2 of Dir2 → Ino
	OpUnlink               // entry Name of Dir (a file) removed
	OpRmdir                // entry Name of Dir (a directory) removed
	OpFsync                // Ino (file or directory) synced: a durability barrier
	OpPromise              // the program wrote Data to its stdout
)

var kindNames = [...]string{"create", "mkdir", "write", "truncate", "rename", "link", "unlink", "rmdir", "fsync", "promise"}

func (k Kind) String() string { return kindNames[k] }

// Op is one logical operation of a recorded workload, on inodes of the
// model file system (numbers shared with the FS the recording began from).
type Op struct {
	Kind        Kind
	Ino         int
	Dir, Dir2   int
	Name, Name2 string
	Off         int64
	Data        []byte
	Path        string // the path it named, relative to the root, for reports
	IsDir       bool   // OpFsync: of a directory
}

func (op *Op) String() string {
	switch op.Kind {
	case OpWrite:
		return fmt.Sprintf("write %s [%d,+%d)", op.Path, op.Off, len(op.Data))
	case OpTruncate:
		return fmt.Sprintf("truncate %s %d", op.Path, op.Off)
	case OpRename, OpLink:
		return fmt.Sprintf("%s %s → %s", op.Kind, op.Path, op.Name2)
	case OpPromise:
		return fmt.Sprintf("promise %.40q", op.Data)
	}
	return fmt.Sprintf("%s %s", op.Kind, op.Path)
}

// Syscalls is the strace filter the recorder traces.
const Syscalls = "openat,open,creat,write,pwrite64,writev,pwritev,pwritev2,fsync,fdatasync,rename,renameat,renameat2,link,linkat,unlink,unlinkat,mkdir,mkdirat,rmdir,ftruncate,truncate,fallocate,copy_file_range,sendfile"

// Run is one recorded command: what it printed and the operations it made
// under the root.
type Run struct {
	Ops    []Op
	Stdout []byte
	Before *FS // the root as it was before the command
}

// Record runs cmd (whose Path is the binary, Args its arguments, Dir
// within root) under strace -f and returns the operations it made under
// root, in the order they returned. root must hold only directories and
// regular files; cmd.Stdout must be unset: the recorder sends it to a file
// outside root whose writes are the promise points.
func Record(strace, root string, cmd *exec.Cmd) (*Run, error) {
	root, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	before, err := Load(root)
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "crash-trace-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	work, _ = filepath.EvalSymlinks(work)
	trace, outPath := filepath.Join(work, "trace"), filepath.Join(work, "stdout")
	out, err := os.Create(outPath)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	args := append([]string{"-f", "-qq", "-y", "-X", "raw", "-xx", "-s", strconv.Itoa(64 << 20),
		"-o", trace, "-e", "trace=" + Syscalls, cmd.Path}, cmd.Args[1:]...)
	sc := exec.Command(strace, args...)
	sc.Dir, sc.Env, sc.Stdin, sc.Stdout = cmd.Dir, cmd.Env, cmd.Stdin, out
	var stderr bytes.Buffer
	sc.Stderr = &stderr
	if err := sc.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) || bytes.Contains(stderr.Bytes(), []byte("ptrace")) {
			return nil, fmt.Errorf("strace %s: %v: %s", cmd.Args, err, stderr.Bytes())
		}
		// The workload may fail on purpose; its operations still count.
	}
	log, err := os.ReadFile(trace)
	if err != nil {
		return nil, err
	}
	stdout, err := os.ReadFile(outPath)
	if err != nil {
		return nil, err
	}
	cwd := cmd.Dir
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	cwd, _ = filepath.EvalSymlinks(cwd)
	p := &parser{root: root, cwd: cwd, stdout: outPath, fs: before.clone(), offsets: map[int]fdOffset{}}
	if err := p.parse(string(log)); err != nil {
		return nil, err
	}
	return &Run{Ops: p.ops, Stdout: stdout, Before: before}, nil
}

type parser struct {
	root, cwd, stdout string
	fs                *FS
	ops               []Op
	offsets           map[int]fdOffset // by fd number: the file offset write(2) uses
}

// fdOffset is where the next write(2) on an fd lands.
type fdOffset struct {
	ino     int
	off     int64
	appends bool
}

// parse reads the log in the order the calls started: a call strace
// shows unfinished takes its place at its start, since strace may log one
// thread's return after another thread's use of what it returned (an fd).
func (p *parser) parse(log string) error {
	pending := map[string]int{} // pid → index in calls of its unfinished call
	var calls []string
	for _, line := range strings.Split(log, "\n") {
		pid, rest, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		rest = strings.TrimLeft(rest, " ")
		if start, ok := strings.CutSuffix(rest, " <unfinished ...>"); ok {
			pending[pid] = len(calls)
			calls = append(calls, start)
			continue
		}
		if strings.HasPrefix(rest, "<... ") {
			_, tail, ok := strings.Cut(rest, " resumed>")
			i, started := pending[pid]
			if !ok || !started {
				continue
			}
			calls[i] += tail
			delete(pending, pid)
			continue
		}
		calls = append(calls, rest)
	}
	for _, c := range calls {
		if err := p.call(c); err != nil {
			return fmt.Errorf("%w in %.300s", err, c)
		}
	}
	return nil
}

// splitCall reads `name(args) = ret` into its parts; args split at
// top-level commas (every string is \x-escaped, so holds no comma). strace
// pads a short line before its " = ", and the end of a resumed call is
// such a line: `<... fsync resumed>)              = 0`.
func splitCall(s string) (name string, args []string, ret string, ok bool) {
	open := strings.IndexByte(s, '(')
	eq := strings.LastIndex(s, " = ")
	if open < 0 || eq < open {
		return "", nil, "", false
	}
	end := len(strings.TrimRight(s[:eq], " ")) - 1
	if end <= open || s[end] != ')' {
		return "", nil, "", false
	}
	name, inner, ret := s[:open], s[open+1:end], strings.TrimSpace(s[eq+3:])
	depth, start := 0, 0
	for i := 0; i < len(inner); i++ {
		switch inner[i] {
		case '[', '{', '(':
			depth++
		case ']', '}', ')':
			depth--
		case ',':
			if depth == 0 {
				args = append(args, strings.TrimSpace(inner[start:i]))
				start = i + 1
			}
		}
	}
	args = append(args, strings.TrimSpace(inner[start:]))
	return name, args, ret, true
}

// unhex decodes strace -xx text: \xNN escapes, the rest as is.
func unhex(s string) []byte {
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' {
			if v, err := hex.DecodeString(s[i+2 : i+4]); err == nil {
				b = append(b, v[0])
				i += 3
				continue
			}
		}
		b = append(b, s[i])
	}
	return b
}

// str reads a quoted -xx string argument.
func str(a string) (string, bool) {
	a = strings.TrimSuffix(a, "...")
	if len(a) < 2 || a[0] != '"' || a[len(a)-1] != '"' {
		return "", false
	}
	return string(unhex(a[1 : len(a)-1])), true
}

// fdPath reads `N<path>` (or a return value in that form).
func fdPath(a string) (int, string) {
	n, rest, _ := strings.Cut(a, "<")
	fd, err := strconv.Atoi(strings.TrimSpace(n))
	if err != nil {
		return -1, ""
	}
	end := strings.LastIndexByte(rest, '>')
	if end < 0 {
		return fd, ""
	}
	return fd, string(unhex(rest[:end]))
}

// rel returns path relative to the root, or false when it lies outside.
func (p *parser) rel(path string) (string, bool) {
	if path == "" {
		return "", false
	}
	r, err := filepath.Rel(p.root, path)
	if err != nil || r == ".." || strings.HasPrefix(r, "../") {
		return "", false
	}
	return r, true
}

// at resolves a name against a dirfd argument (`-100<cwd>` or `N<dir>`).
func (p *parser) at(dirfd, name string) string {
	if filepath.IsAbs(name) {
		return filepath.Clean(name)
	}
	_, dir := fdPath(dirfd)
	if dir == "" {
		dir = p.cwd
	}
	return filepath.Join(dir, name)
}

// entry splits a path under the root into its parent's inode and name.
func (p *parser) entry(path string) (dir int, name, rel string, ok bool) {
	r, ok := p.rel(path)
	if !ok || r == "." {
		return 0, "", "", false
	}
	d := p.fs.lookup(filepath.Dir(r))
	if d == 0 {
		return 0, "", "", false
	}
	return d, filepath.Base(r), r, true
}

func (p *parser) add(op Op) {
	p.fs.apply(&op)
	p.ops = append(p.ops, op)
}

func (p *parser) newIno() int {
	n := p.fs.next
	p.fs.next++
	return n
}

const (
	oCreat    = 0x40
	oTrunc    = 0x200
	oAppend   = 0x400
	atRemove  = 0x200
	renameXch = 0x2
)

func (p *parser) call(s string) error {
	name, args, ret, ok := splitCall(s)
	if !ok || strings.HasPrefix(ret, "-") || strings.HasPrefix(ret, "?") {
		return nil // not a call, or a failed one: it changed nothing
	}
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	switch name {
	case "open", "creat", "openat":
		var path string
		var flags int64
		switch name {
		case "openat":
			n, _ := str(arg(1))
			path = p.at(arg(0), n)
			flags, _ = strconv.ParseInt(arg(2), 0, 64)
		case "open":
			n, _ := str(arg(0))
			path = p.at("", n)
			flags, _ = strconv.ParseInt(arg(1), 0, 64)
		case "creat":
			n, _ := str(arg(0))
			path = p.at("", n)
			flags = oCreat | oTrunc
		}
		dir, base, rel, ok := p.entry(path)
		if !ok {
			return nil
		}
		ino := p.fs.ino[dir].entries[base]
		if ino != 0 {
			if flags&oTrunc != 0 && !p.fs.ino[ino].dir && len(p.fs.ino[ino].data) > 0 {
				p.add(Op{Kind: OpTruncate, Ino: ino, Path: rel})
			}
		} else if flags&oCreat != 0 {
			ino = p.newIno()
			p.add(Op{Kind: OpCreate, Dir: dir, Name: base, Ino: ino, Path: rel})
		}
		if fd, _ := fdPath(ret); fd >= 0 && ino != 0 {
			p.offsets[fd] = fdOffset{ino: ino, appends: flags&oAppend != 0}
		}
	case "write", "pwrite64":
		fd, path := fdPath(arg(0))
		data, ok := str(arg(1))
		if !ok {
			return fmt.Errorf("crash: unreadable data")
		}
		n, _ := strconv.Atoi(ret)
		if n > len(data) {
			return fmt.Errorf("crash: strace cut the data at %d of %d bytes", len(data), n)
		}
		if path == p.stdout && fd >= 0 {
			p.ops = append(p.ops, Op{Kind: OpPromise, Data: []byte(data[:n])})
			return nil
		}
		r, ok := p.rel(path)
		if !ok {
			return nil
		}
		ino := p.fs.lookup(r)
		if ino == 0 {
			return fmt.Errorf("crash: write to %s, which the model lacks", r)
		}
		var off int64
		if name == "pwrite64" {
			off, _ = strconv.ParseInt(arg(3), 0, 64)
		} else {
			// write(2) appends at the file offset; retval's writers
			// write files front to back after creating or truncating
			// them, so the offset is the model's size, except for an
			// O_APPEND log, where it is too.
			off = int64(len(p.fs.ino[ino].data))
			if o, ok := p.offsets[fd]; ok && o.ino == ino && !o.appends {
				off = o.off
			}
		}
		p.add(Op{Kind: OpWrite, Ino: ino, Off: off, Data: []byte(data[:n]), Path: r})
		if o, ok := p.offsets[fd]; ok && o.ino == ino {
			if name == "write" {
				o.off = off + int64(n)
				p.offsets[fd] = o
			}
		}
	case "writev", "pwritev", "pwritev2", "fallocate", "copy_file_range", "sendfile":
		_, path := fdPath(arg(0))
		if _, ok := p.rel(path); ok {
			return fmt.Errorf("crash: %s under the root is not modelled", name)
		}
	case "fsync", "fdatasync":
		_, path := fdPath(arg(0))
		r, ok := p.rel(path)
		if !ok {
			return nil
		}
		ino := p.fs.lookup(r)
		if ino == 0 {
			return nil
		}
		p.add(Op{Kind: OpFsync, Ino: ino, Path: r, IsDir: p.fs.ino[ino].dir})
	case "ftruncate", "truncate":
		var path string
		if name == "ftruncate" {
			_, path = fdPath(arg(0))
		} else {
			n, _ := str(arg(0))
			path = p.at("", n)
		}
		r, ok := p.rel(path)
		if !ok {
			return nil
		}
		size, _ := strconv.ParseInt(arg(1), 0, 64)
		if ino := p.fs.lookup(r); ino != 0 {
			p.add(Op{Kind: OpTruncate, Ino: ino, Off: size, Path: r})
		}
	case "mkdir", "mkdirat":
		var path string
		if name == "mkdir" {
			n, _ := str(arg(0))
			path = p.at("", n)
		} else {
			n, _ := str(arg(1))
			path = p.at(arg(0), n)
		}
		if dir, base, rel, ok := p.entry(path); ok {
			p.add(Op{Kind: OpMkdir, Dir: dir, Name: base, Ino: p.newIno(), Path: rel})
		}
	case "rename", "renameat", "renameat2", "link", "linkat":
		var from, to string
		if name == "rename" || name == "link" {
			a, _ := str(arg(0))
			b, _ := str(arg(1))
			from, to = p.at("", a), p.at("", b)
		} else {
			a, _ := str(arg(1))
			b, _ := str(arg(3))
			from, to = p.at(arg(0), a), p.at(arg(2), b)
			if name == "renameat2" {
				if f, _ := strconv.ParseInt(arg(4), 0, 64); f&renameXch != 0 {
					return fmt.Errorf("crash: RENAME_EXCHANGE is not modelled")
				}
			}
		}
		d1, n1, r1, ok1 := p.entry(from)
		d2, n2, _, ok2 := p.entry(to)
		if !ok1 && !ok2 {
			return nil
		}
		if !ok1 || !ok2 {
			return fmt.Errorf("crash: %s across the root's edge is not modelled", name)
		}
		ino := p.fs.ino[d1].entries[n1]
		kind := OpRename
		if strings.HasPrefix(name, "link") {
			kind = OpLink
		}
		p.add(Op{Kind: kind, Ino: ino, Dir: d1, Name: n1, Dir2: d2, Name2: n2, Path: r1})
	case "unlink", "unlinkat", "rmdir":
		var path string
		kind := OpUnlink
		switch name {
		case "unlinkat":
			n, _ := str(arg(1))
			path = p.at(arg(0), n)
			if f, _ := strconv.ParseInt(arg(2), 0, 64); f&atRemove != 0 {
				kind = OpRmdir
			}
		default:
			n, _ := str(arg(0))
			path = p.at("", n)
			if name == "rmdir" {
				kind = OpRmdir
			}
		}
		if dir, base, rel, ok := p.entry(path); ok {
			p.add(Op{Kind: kind, Dir: dir, Name: base, Ino: p.fs.ino[dir].entries[base], Path: rel})
		}
	}
	return nil
}
