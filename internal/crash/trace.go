package crash

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
// The first line changes files; the second tracks what each fd of each
// process names.
const Syscalls = "openat,open,creat,write,pwrite64,writev,pwritev,pwritev2,fsync,fdatasync,rename,renameat,renameat2,link,linkat,unlink,unlinkat,mkdir,mkdirat,rmdir,ftruncate,truncate,fallocate,copy_file_range,sendfile,symlink,symlinkat,mknod,mknodat," +
	"close,close_range,dup,dup2,dup3,fcntl,lseek,clone,clone3,fork,vfork,execve,execveat"

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
	p := &parser{root: root, cwd: cwd, stdout: outPath, fs: before.clone(), tables: map[string]fdTable{}}
	if err := p.parse(string(log)); err != nil {
		return nil, err
	}
	return &Run{Ops: p.ops, Stdout: stdout, Before: before}, nil
}

// A recorded call of the log: its text with an unfinished start and its
// resumed end joined, and the thread that made it.
type call struct {
	tid  string
	text string
	// parsed by splitCall from text once the call is whole
	name string
	args []string
	ret  string
	ok   bool
	// set by the call's start for its end
	target  *fdFile // what an open opened, nil when outside the root
	pending bool    // never resumed
}

// event is the start or the end of a call, in the order strace logged it.
type event struct {
	c   *call
	end bool
}

// parse reads the log as a sequence of call starts and ends, in the order
// strace logged them, and applies them to the model:
//
//   - a call's effect on the file system is taken at its start. strace logs
//     a thread's call whole only when no other thread's call was logged
//     between its entry and its exit, and otherwise in two lines
//     ("<unfinished ...>" at entry, "<... resumed>" at exit). The entry
//     of a call that depends on another call's effect (a file created in
//     a directory another thread made, an fd another thread opened) is
//     logged after that call's entry, so the order of starts respects
//     every dependency, where the order of exits need not: a thread may
//     be logged returning from mkdirat after another thread already
//     created a file in the directory it made.
//   - what a call returns (an fd) is taken at its end: a number an open
//     returns may be one another thread closed after the open began.
//
// Each process's fds are tracked (opened, duplicated, closed, shared by
// threads and copied by fork, closed on exec), so a write, an fsync or a
// directory fd names the inode its open found, whatever its path since.
func (p *parser) parse(log string) error {
	pending := map[string]*call{} // tid → its unfinished call
	var events []event
	for _, line := range strings.Split(log, "\n") {
		tid, rest, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		rest = strings.TrimLeft(rest, " ")
		if strings.HasPrefix(rest, "--- ") || strings.HasPrefix(rest, "+++ ") {
			continue // a signal, an exit
		}
		if strings.HasSuffix(rest, "<detached ...>") {
			// A thread strace let go of in a call (its process was
			// exiting): the call, if any, never returns in the log.
			continue
		}
		if start, ok := strings.CutSuffix(rest, " <unfinished ...>"); ok {
			c := &call{tid: tid, text: start}
			pending[tid] = c
			events = append(events, event{c: c})
			continue
		}
		if strings.HasPrefix(rest, "<... ") {
			_, tail, ok := strings.Cut(rest, " resumed>")
			c := pending[tid]
			if !ok || c == nil {
				return fmt.Errorf("crash: a resumed call without its start: %.300s", line)
			}
			delete(pending, tid)
			c.text += tail
			events = append(events, event{c: c, end: true})
			continue
		}
		c := &call{tid: tid, text: rest}
		events = append(events, event{c: c}, event{c: c, end: true})
	}
	for _, c := range pending {
		c.pending = true
	}
	for _, e := range events {
		c := e.c
		if !c.ok && c.name == "" {
			c.name, c.args, c.ret, c.ok = splitCall(c.text)
			if !c.ok && !c.pending {
				return fmt.Errorf("crash: unreadable call %.300s", c.text)
			}
		}
		// A call still pending never returned (its process was killed):
		// it has no result, and is taken to have changed nothing, as a
		// failed call did.
		if c.pending || strings.HasPrefix(c.ret, "-") || strings.HasPrefix(c.ret, "?") {
			continue
		}
		var err error
		if e.end {
			err = p.end(c)
		} else {
			err = p.start(c)
		}
		if err != nil {
			return fmt.Errorf("%w in %.300s", err, c.text)
		}
	}
	return nil
}

// resultRE finds where a call's arguments end and its result begins:
// strace pads a resumed call's result to a column.
var resultRE = regexp.MustCompile(`\)\s+= `)

// splitCall reads `name(args) = ret` into its parts; args split at
// top-level commas (every string is \x-escaped, so holds no comma).
func splitCall(s string) (name string, args []string, ret string, ok bool) {
	open := strings.IndexByte(s, '(')
	locs := resultRE.FindAllStringIndex(s, -1)
	if open < 0 || len(locs) == 0 || locs[len(locs)-1][0] < open {
		return "", nil, "", false
	}
	eq := locs[len(locs)-1]
	name, inner, ret := s[:open], s[open+1:eq[0]], strings.TrimSpace(s[eq[1]:])
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

// fdPath reads `N<path>` (an fd argument or result as -y prints it).
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

// num reads an integer argument or result (decimal or 0x hex, -X raw).
func num(a string) int64 {
	a, _, _ = strings.Cut(strings.TrimSpace(a), " ")
	if n, err := strconv.ParseInt(a, 0, 64); err == nil {
		return n
	}
	u, _ := strconv.ParseUint(a, 0, 64)
	return int64(u)
}

// fdFile is an open file description: what an open found, and where the
// next write(2) lands. Duplicated fds share one.
type fdFile struct {
	ino     int
	off     int64
	appends bool
}

// fdSlot is one fd of a process; file is nil for what lies outside the
// root (or is no file of the model: a pipe, a socket).
type fdSlot struct {
	file    *fdFile
	cloexec bool
}

// fdTable is the fds of a process, shared by its threads.
type fdTable map[int]fdSlot

func (p *parser) table(tid string) fdTable {
	t := p.tables[tid]
	if t == nil {
		t = fdTable{}
		p.tables[tid] = t
	}
	return t
}

// parser turns a log into operations on the model.
type parser struct {
	root, cwd, stdout string
	fs                *FS
	ops               []Op
	tables            map[string]fdTable // by thread id
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

// name is where a (dirfd, path) pair of a call points: the directory
// inode holding the entry, and the entry's name; ino is the inode the
// path names as a whole ("." of a directory fd, or the root itself), 0
// when it is to be looked up as dir's entry. outside is set for what
// lies outside the root.
type name struct {
	dir     int
	base    string
	whole   int
	outside bool
	path    string // relative to the root, for reports
}

// lookupName resolves a path argument against a dirfd argument (`-100<cwd>`
// or `N<dir>`; "" for a call without one) in tid's process.
func (p *parser) lookupName(tid, dirfd, path string) (name, error) {
	if !filepath.IsAbs(path) {
		fd, dpath := fdPath(dirfd)
		if slot, ok := p.table(tid)[fd]; ok && fd >= 0 {
			if slot.file == nil {
				return name{outside: true}, nil
			}
			return p.walk(slot.file.ino, p.fs.pathOf(slot.file.ino), path)
		}
		if dpath == "" {
			dpath = p.cwd
		}
		path = filepath.Join(dpath, path)
	}
	r, ok := p.rel(filepath.Clean(path))
	if !ok {
		return name{outside: true}, nil
	}
	return p.walk(rootIno, ".", r)
}

// walk resolves the relative path rel from directory inode dir (whose
// path is at, for reports).
func (p *parser) walk(dir int, at, rel string) (name, error) {
	parts := strings.Split(filepath.Clean(rel), "/")
	for i, part := range parts {
		switch {
		case part == "..":
			return name{}, fmt.Errorf("crash: path %s with .. is not modelled", rel)
		case part == "." && i == len(parts)-1:
			return name{whole: dir, path: at}, nil
		case part == ".":
			continue
		}
		in := p.fs.ino[dir]
		if in == nil || !in.dir {
			return name{}, fmt.Errorf("crash: %s is not a directory of the model", at)
		}
		if i == len(parts)-1 {
			return name{dir: dir, base: part, path: filepath.Join(at, part)}, nil
		}
		next := in.entries[part]
		if next == 0 {
			return name{}, fmt.Errorf("crash: %s lacks %s", at, part)
		}
		dir, at = next, filepath.Join(at, part)
	}
	return name{whole: dir, path: at}, nil
}

// ino is the inode n names now, 0 when there is none.
func (p *parser) ino(n name) int {
	if n.whole != 0 {
		return n.whole
	}
	return p.fs.ino[n.dir].entries[n.base]
}

// file is the open file an fd argument names in tid's process: nil for
// one outside the root (or stdout, which the caller checks first). An fd
// that is not known yet that -y shows under the root is an error.
func (p *parser) file(tid, arg string) (*fdFile, string, error) {
	fd, path := fdPath(arg)
	slot, ok := p.table(tid)[fd]
	if ok {
		if slot.file == nil {
			return nil, "", nil
		}
		return slot.file, p.fs.pathOf(slot.file.ino), nil
	}
	if r, under := p.rel(strings.TrimSuffix(path, " (deleted)")); under {
		return nil, "", fmt.Errorf("crash: fd %d (%s) was not opened in the trace", fd, r)
	}
	return nil, "", nil
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
	oCreat         = 0x40
	oTrunc         = 0x200
	oAppend        = 0x400
	oCloexec       = 0x80000
	atRemove       = 0x200
	renameXch      = 0x2
	cloneFiles     = 0x400
	fDupfd         = 0
	fSetfd         = 2
	fDupfdCloexec  = 0x406
	closeRangeExec = 0x4
)

// cloneFlags finds the flags of a clone or clone3 call.
var cloneFlags = regexp.MustCompile(`flags=(0x[0-9a-f]+|[0-9]+)`)

// start applies what a call did to the file system, and closes what it
// closed.
func (p *parser) start(c *call) error {
	arg := func(i int) string {
		if i < len(c.args) {
			return c.args[i]
		}
		return ""
	}
	switch c.name {
	case "open", "creat", "openat":
		var n name
		var err error
		var flags int64
		switch c.name {
		case "openat":
			s, _ := str(arg(1))
			n, err = p.lookupName(c.tid, arg(0), s)
			flags = num(arg(2))
		case "open":
			s, _ := str(arg(0))
			n, err = p.lookupName(c.tid, "", s)
			flags = num(arg(1))
		case "creat":
			s, _ := str(arg(0))
			n, err = p.lookupName(c.tid, "", s)
			flags = oCreat | oTrunc
		}
		if err != nil {
			return err
		}
		if n.outside {
			return nil
		}
		ino := p.ino(n)
		switch {
		case ino != 0:
			if flags&oTrunc != 0 && !p.fs.ino[ino].dir && len(p.fs.ino[ino].data) > 0 {
				p.add(Op{Kind: OpTruncate, Ino: ino, Path: n.path})
			}
		case flags&oCreat != 0:
			ino = p.newIno()
			p.add(Op{Kind: OpCreate, Dir: n.dir, Name: n.base, Ino: ino, Path: n.path})
		default:
			return fmt.Errorf("crash: open of %s, which the model lacks", n.path)
		}
		c.target = &fdFile{ino: ino, appends: flags&oAppend != 0}
	case "write", "pwrite64":
		if _, path := fdPath(arg(0)); path == p.stdout {
			data, ok := str(arg(1))
			n := int(num(c.ret))
			if !ok || n > len(data) {
				return fmt.Errorf("crash: unreadable data")
			}
			p.ops = append(p.ops, Op{Kind: OpPromise, Data: []byte(data[:n])})
			return nil
		}
		f, path, err := p.file(c.tid, arg(0))
		if f == nil {
			return err
		}
		data, ok := str(arg(1))
		if !ok {
			return fmt.Errorf("crash: unreadable data")
		}
		n := int(num(c.ret))
		if n > len(data) {
			return fmt.Errorf("crash: strace cut the data at %d of %d bytes", len(data), n)
		}
		// write(2) lands at the file offset: the description's, which
		// writes and lseek move, or the end for O_APPEND. Reads are not
		// traced: retval never read(2)s and then write(2)s through one
		// description (the step ledger reads, then pwrite64s at 0).
		off := f.off
		if c.name == "pwrite64" {
			off = num(arg(3))
		} else if f.appends {
			off = int64(len(p.fs.ino[f.ino].data))
		}
		p.add(Op{Kind: OpWrite, Ino: f.ino, Off: off, Data: []byte(data[:n]), Path: path})
		if c.name == "write" {
			f.off = off + int64(n)
		}
	case "lseek":
		if f, _, err := p.file(c.tid, arg(0)); f != nil {
			f.off = num(c.ret)
		} else if err != nil {
			return err
		}
	case "writev", "pwritev", "pwritev2", "fallocate", "copy_file_range", "sendfile":
		f, _, err := p.file(c.tid, arg(0))
		if f != nil {
			return fmt.Errorf("crash: %s under the root is not modelled", c.name)
		}
		return err
	case "fsync", "fdatasync":
		f, path, err := p.file(c.tid, arg(0))
		if f == nil {
			return err
		}
		p.add(Op{Kind: OpFsync, Ino: f.ino, Path: path, IsDir: p.fs.ino[f.ino] != nil && p.fs.ino[f.ino].dir})
	case "ftruncate", "truncate":
		var ino int
		var path string
		if c.name == "ftruncate" {
			f, fpath, err := p.file(c.tid, arg(0))
			if f == nil {
				return err
			}
			ino, path = f.ino, fpath
		} else {
			s, _ := str(arg(0))
			n, err := p.lookupName(c.tid, "", s)
			if err != nil || n.outside {
				return err
			}
			if ino = p.ino(n); ino == 0 {
				return fmt.Errorf("crash: truncate of %s, which the model lacks", n.path)
			}
			path = n.path
		}
		p.add(Op{Kind: OpTruncate, Ino: ino, Off: num(arg(1)), Path: path})
	case "mkdir", "mkdirat":
		var n name
		var err error
		if c.name == "mkdir" {
			s, _ := str(arg(0))
			n, err = p.lookupName(c.tid, "", s)
		} else {
			s, _ := str(arg(1))
			n, err = p.lookupName(c.tid, arg(0), s)
		}
		if err != nil || n.outside {
			return err
		}
		p.add(Op{Kind: OpMkdir, Dir: n.dir, Name: n.base, Ino: p.newIno(), Path: n.path})
	case "rename", "renameat", "renameat2", "link", "linkat":
		var from, to name
		var err1, err2 error
		if c.name == "rename" || c.name == "link" {
			a, _ := str(arg(0))
			b, _ := str(arg(1))
			from, err1 = p.lookupName(c.tid, "", a)
			to, err2 = p.lookupName(c.tid, "", b)
		} else {
			a, _ := str(arg(1))
			b, _ := str(arg(3))
			from, err1 = p.lookupName(c.tid, arg(0), a)
			to, err2 = p.lookupName(c.tid, arg(2), b)
			if c.name == "renameat2" && num(arg(4))&renameXch != 0 {
				return fmt.Errorf("crash: RENAME_EXCHANGE is not modelled")
			}
		}
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		if from.outside && to.outside {
			return nil
		}
		if from.outside || to.outside || from.whole != 0 || to.whole != 0 {
			return fmt.Errorf("crash: %s across the root's edge is not modelled", c.name)
		}
		ino := p.ino(from)
		if ino == 0 {
			return fmt.Errorf("crash: %s of %s, which the model lacks", c.name, from.path)
		}
		kind := OpRename
		if strings.HasPrefix(c.name, "link") {
			kind = OpLink
		}
		p.add(Op{Kind: kind, Ino: ino, Dir: from.dir, Name: from.base, Dir2: to.dir, Name2: to.base, Path: from.path})
	case "unlink", "unlinkat", "rmdir":
		var n name
		var err error
		kind := OpUnlink
		switch c.name {
		case "unlinkat":
			s, _ := str(arg(1))
			n, err = p.lookupName(c.tid, arg(0), s)
			if num(arg(2))&atRemove != 0 {
				kind = OpRmdir
			}
		default:
			s, _ := str(arg(0))
			n, err = p.lookupName(c.tid, "", s)
			if c.name == "rmdir" {
				kind = OpRmdir
			}
		}
		if err != nil || n.outside {
			return err
		}
		ino := p.ino(n)
		if ino == 0 || n.whole != 0 {
			return fmt.Errorf("crash: %s of %s, which the model lacks", c.name, n.path)
		}
		p.add(Op{Kind: kind, Dir: n.dir, Name: n.base, Ino: ino, Path: n.path})
	case "symlink", "symlinkat", "mknod", "mknodat":
		i, dirfd := 0, ""
		switch c.name {
		case "symlink":
			i = 1
		case "symlinkat":
			i, dirfd = 2, arg(1)
		case "mknodat":
			i, dirfd = 1, arg(0)
		}
		s, _ := str(arg(i))
		if n, err := p.lookupName(c.tid, dirfd, s); err != nil || !n.outside {
			return errors.Join(err, fmt.Errorf("crash: %s under the root is not modelled", c.name))
		}
	case "close":
		fd, _ := fdPath(arg(0))
		delete(p.table(c.tid), fd)
	case "close_range":
		t := p.table(c.tid)
		first, last := num(arg(0)), uint64(num(arg(1)))
		for fd, s := range t {
			if int64(fd) >= first && uint64(fd) <= last {
				if num(arg(2))&closeRangeExec != 0 {
					s.cloexec = true
					t[fd] = s
				} else {
					delete(t, fd)
				}
			}
		}
	case "clone", "clone3", "fork", "vfork":
		// The child's first calls may be logged before the parent's
		// return, never before the clone's start.
		child := c.ret
		var flags int64
		if m := cloneFlags.FindStringSubmatch(c.text); m != nil {
			flags = num(m[1])
		}
		parent := p.table(c.tid)
		if flags&cloneFiles != 0 {
			p.tables[child] = parent
		} else {
			t := fdTable{}
			for fd, s := range parent {
				t[fd] = s
			}
			p.tables[child] = t
		}
	}
	return nil
}

// end takes what a call returned: an fd, an exec's closing of fds.
func (p *parser) end(c *call) error {
	arg := func(i int) string {
		if i < len(c.args) {
			return c.args[i]
		}
		return ""
	}
	t := p.table(c.tid)
	set := func(fd int, s fdSlot) {
		if fd >= 0 {
			t[fd] = s
		}
	}
	switch c.name {
	case "open", "creat", "openat":
		fd, _ := fdPath(c.ret)
		flags := num(arg(2))
		if c.name == "open" {
			flags = num(arg(1))
		}
		set(fd, fdSlot{file: c.target, cloexec: flags&oCloexec != 0})
	case "dup", "dup2", "dup3":
		old, _ := fdPath(arg(0))
		fd, _ := fdPath(c.ret)
		set(fd, fdSlot{file: t[old].file, cloexec: c.name == "dup3" && num(arg(2))&oCloexec != 0})
	case "fcntl":
		fd, _ := fdPath(arg(0))
		switch num(arg(1)) {
		case fDupfd, fDupfdCloexec:
			n, _ := fdPath(c.ret)
			set(n, fdSlot{file: t[fd].file, cloexec: num(arg(1)) == fDupfdCloexec})
		case fSetfd:
			if s, ok := t[fd]; ok {
				s.cloexec = num(arg(2))&1 != 0
				t[fd] = s
			}
		}
	case "execve", "execveat":
		for fd, s := range t {
			if s.cloexec {
				delete(t, fd)
			}
		}
	}
	return nil
}
