// Package mcpwrap rewrites an MCP client's server entries so the server
// runs through retval's proxy, and back: a Codex config.toml
// [mcp_servers.NAME] table or a Claude Code mcpServers member (.mcp.json,
// a settings file) whose command and args start a server over stdio gets
//
//	command = RETVAL, args = ["mcp", "proxy", "--", OLD COMMAND, OLD ARGS...]
//
// Only those two values change: every other byte of the file is kept (the
// files are edited as text, never reprinted), and the file is decoded
// before and after to prove that nothing else moved. Unwrap restores the
// command and args byte for byte; a wrap followed by an unwrap leaves the
// file as it was.
package mcpwrap

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/retval/retval/internal/splice"
	"github.com/retval/retval/internal/userfile"
	"github.com/rogpeppe/go-internal/diff"
)

// Format is the kind of client configuration file.
type Format int

const (
	// Codex is a Codex config.toml with [mcp_servers.NAME] tables.
	Codex Format = iota + 1
	// ClaudeCode is a Claude Code .mcp.json or settings file with an
	// mcpServers object.
	ClaudeCode
)

func (f Format) String() string {
	switch f {
	case Codex:
		return "codex"
	case ClaudeCode:
		return "claude-code"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// ProxyArgs are the arguments that, before a server's own command line,
// make retval run it through the proxy.
var ProxyArgs = []string{"mcp", "proxy", "--"}

// BackupSuffix names the copy of a file as it was before a wrap or unwrap
// changed it (the hook's install keeps the same).
const BackupSuffix = userfile.BackupSuffix

// MaxFileSize bounds a configuration file read for editing (Claude Code
// keeps its history in ~/.claude.json, beside the user-scope mcpServers).
const MaxFileSize = 64 << 20

// CodexConfig is Codex's configuration file: $CODEX_HOME/config.toml when
// CODEX_HOME is set, else ~/.codex/config.toml.
func CodexConfig() (string, error) {
	if d := os.Getenv("CODEX_HOME"); d != "" {
		return filepath.Abs(filepath.Join(d, "config.toml"))
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("no home directory: set HOME or CODEX_HOME")
	}
	return filepath.Join(home, ".codex", "config.toml"), nil
}

// Options say what Wrap and Unwrap edit.
type Options struct {
	// Format is the kind of file at Path.
	Format Format
	// Path is the file to edit. A symlink is edited where it points, so
	// the link stays a link.
	Path string
	// Server names the entry to change (in a Claude Code ~/.claude.json,
	// the entries of that name in every project); "" means every entry
	// that can be: Wrap wraps every server started as a command and not wrapped
	// yet, Unwrap unwraps every wrapped one.
	Server string
	// Command is the absolute path of the retval binary the wrapped
	// entries run. An entry is recognised as wrapped when its command is
	// this one, or any program named retval, and its args start with
	// "mcp", "proxy".
	Command string
	// DryRun computes the change and its diff and writes nothing.
	DryRun bool
}

// Action is what happened to one server entry (its text is also its
// name in JSON output).
type Action string

const (
	Wrapped        Action = "wrapped"
	AlreadyWrapped Action = "already_wrapped"
	Unwrapped      Action = "unwrapped"
	NotWrapped     Action = "not_wrapped"
	// Remote is a server the client reaches at a URL: it is left alone
	// (its authentication stays with the client); retval mcp proxy --url
	// relays one when set up by hand.
	Remote Action = "remote"
)

// Entry is one server entry of the file and what was done to it.
type Entry struct {
	Name string
	// Project is the project directory of a Claude Code entry kept in
	// ~/.claude.json under projects (the "local" scope); "" elsewhere.
	Project string
	Action  Action
	// Command is the server's own command line (for a remote server, its
	// URL), as it reads unwrapped.
	Command []string
}

// Result is what Wrap or Unwrap did to the file.
type Result struct {
	// Path is the file as named in Options.
	Path string
	// Entries are the servers looked at, in the file's order.
	Entries []Entry
	// Changed reports whether the file's text changed (or would have,
	// in a dry run).
	Changed bool
	// Diff is a unified diff of the change; empty when nothing changed.
	Diff []byte
	// Backup is the copy of the file as it was; "" when nothing was
	// written.
	Backup string
}

// Wrap rewrites the server entries of the file to run through the proxy.
// A file that cannot be read or decoded, an entry written in a form this
// package does not edit (it then says what to change by hand), or an
// edit that would change anything but the command and args is refused
// and the file left untouched.
func Wrap(o Options) (*Result, error) { return run(o, true) }

// Unwrap undoes Wrap: every wrapped entry (or o.Server) gets back the
// command and args it had, byte for byte.
func Unwrap(o Options) (*Result, error) { return run(o, false) }

// server is one server entry as found in the text.
type server struct {
	name    string
	project string // see Entry.Project
	remote  string // the URL of a remote server
	cmd     *span  // the command value; nil when there is none
	args    *array // the args value; nil when absent
	argsErr error  // why args cannot be edited (a form not handled)
	cmdErr  error  // why command cannot be edited
	// addArgs is the text that, inserted at addAt, adds an args member
	// holding ARRAY, in two pieces around it.
	addArgs [2]string
	addAt   int
	// argsAdjacent reports that the args member follows the command and
	// can be removed, when Unwrap leaves it empty and it is written just
	// as Wrap adds one, by cutting src[cut[0]:cut[1]]. Codex writes no
	// args for a server without arguments; Claude Code writes "args": [].
	argsAdjacent bool
	cut          [2]int
}

// span is a value's lexeme at src[start:end] and, for a string, its value.
type span struct {
	start, end int
	s          string
	isString   bool
}

// array is a single-line array of strings at src[start:end].
type array struct {
	start, end int
	elems      []span
}

// format is what a file format provides to the common edit.
type format interface {
	// servers finds the entries in src, whose decoded form is doc.
	servers(src string, doc any) ([]*server, error)
	// quote writes s as a string lexeme.
	quote(s string) string
	// decode decodes a whole file, for comparing before and after.
	decode(src []byte) (any, error)
	// expect applies to a decoded file the change to server name.
	expect(doc any, s *server, command string, args []string, argsPresent bool) error
	// where names an entry for messages.
	where(s *server) string
	// kind names the file's syntax for messages.
	kind() string
}

var formats = map[Format]format{Codex: codexFormat{}, ClaudeCode: claudeFormat{}}

func formatOf(f Format) (format, error) {
	if ff, ok := formats[f]; ok {
		return ff, nil
	}
	return nil, errors.New("no file format")
}

func run(o Options, wrap bool) (*Result, error) {
	ff, err := formatOf(o.Format)
	if err != nil {
		return nil, err
	}
	if o.Path == "" {
		return nil, errors.New("no file to edit")
	}
	if wrap && !filepath.IsAbs(o.Command) {
		return nil, fmt.Errorf("the retval command %q is not an absolute path", o.Command)
	}
	f, err := userfile.Load(o.Path, MaxFileSize)
	if err != nil {
		return nil, err
	}
	if !f.Exists {
		return nil, fmt.Errorf("%s does not exist: nothing to do", o.Path)
	}
	before, err := ff.decode(f.Old)
	if err != nil {
		return nil, fmt.Errorf("%s is not valid %s: %v; it is left as it is: fix it, then run this again", o.Path, ff.kind(), err)
	}
	src := string(f.Old)
	all, err := ff.servers(src, before)
	if err != nil {
		return nil, fmt.Errorf("%s: %v; it is left as it is", o.Path, err)
	}
	res := &Result{Path: o.Path}
	chosen := all
	if o.Server != "" {
		chosen = nil
		var names []string
		for _, s := range all {
			if s.name == o.Server {
				chosen = append(chosen, s)
			}
			if !slices.Contains(names, s.name) {
				names = append(names, s.name)
			}
		}
		switch {
		case chosen != nil:
		case len(names) == 0:
			return nil, fmt.Errorf("%s has no server %q (it has none)", o.Path, o.Server)
		default:
			return nil, fmt.Errorf("%s has no server %q: it has %s", o.Path, o.Server, strings.Join(names, ", "))
		}
	}
	var edits []splice.Edit
	for _, s := range chosen {
		e := Entry{Name: s.name, Project: s.project}
		switch {
		case s.remote != "" && s.cmd == nil:
			e.Action, e.Command = Remote, []string{s.remote}
			if o.Server != "" {
				return nil, fmt.Errorf("%s is a remote server (url %s): only a server started as a command is wrapped; relay this one with retval mcp proxy --url by hand", ff.where(s), s.remote)
			}
			res.Entries = append(res.Entries, e)
			continue
		case s.cmdErr != nil:
			return nil, fmt.Errorf("%s: %v", ff.where(s), s.cmdErr)
		case s.cmd == nil:
			return nil, fmt.Errorf("%s has neither command nor url: fix it by hand", ff.where(s))
		case s.argsErr != nil:
			return nil, fmt.Errorf("%s: %v", ff.where(s), s.argsErr)
		}
		k := wrappedAt(s, o.Command)
		own := append([]string{s.cmd.s}, s.args.strings()...)
		if k > 0 {
			own = s.args.strings()[k-1:]
		}
		e.Command = own
		var cmdText string
		var newArgs []string
		argsPresent := true
		switch {
		case wrap && k > 0:
			e.Action = AlreadyWrapped
		case !wrap && k == 0:
			e.Action = NotWrapped
		case wrap:
			e.Action = Wrapped
			ins := make([]string, 0, len(ProxyArgs)+1)
			for _, a := range ProxyArgs {
				ins = append(ins, ff.quote(a))
			}
			ins = append(ins, src[s.cmd.start:s.cmd.end])
			cmdText = ff.quote(o.Command)
			newArgs = append(slices.Clone(ProxyArgs), own...)
			edits = append(edits, splice.Edit{Start: s.cmd.start, End: s.cmd.end, Text: cmdText})
			if s.args != nil {
				edits = append(edits, s.args.list().Insert(src, 0, ins, splice.Layout{}))
			} else {
				argsText := s.addArgs[0] + "[" + strings.Join(ins, ", ") + "]" + s.addArgs[1]
				edits = append(edits, splice.Edit{Start: s.addAt, End: s.addAt, Text: argsText})
			}
		default:
			e.Action = Unwrapped
			el := s.args.elems[k-1]
			cmdText = src[el.start:el.end]
			newArgs = own[1:]
			edits = append(edits, splice.Edit{Start: s.cmd.start, End: s.cmd.end, Text: cmdText})
			if len(newArgs) == 0 && s.argsAdjacent && src[s.cut[0]:s.cut[1]] == s.addArgs[0]+"["+strings.Join(s.args.lexemes(src), ", ")+"]"+s.addArgs[1] {
				// The args is written just as Wrap adds one: it goes.
				argsPresent = false
				edits = append(edits, splice.Edit{Start: s.cut[0], End: s.cut[1]})
			} else {
				edits = append(edits, s.args.list().Remove(src, 0, k, splice.Layout{}))
			}
		}
		res.Entries = append(res.Entries, e)
		if e.Action == Wrapped || e.Action == Unwrapped {
			cmd := o.Command
			if !wrap {
				cmd = own[0]
			}
			if err := ff.expect(before, s, cmd, newArgs, argsPresent); err != nil {
				return nil, err
			}
		}
	}
	now, err := splice.Apply(src, edits...)
	if err != nil {
		return nil, fmt.Errorf("%s: %v; it is left as it is: change it by hand", o.Path, err)
	}
	if now == src {
		return res, nil
	}
	after, err := ff.decode([]byte(now))
	if err != nil {
		return nil, fmt.Errorf("%s: the edit would not decode (%v); it is left as it is: change it by hand", o.Path, err)
	}
	if !equal(before, after) {
		return nil, fmt.Errorf("%s: the edit would change more than command and args; it is left as it is: change it by hand", o.Path)
	}
	res.Changed = true
	res.Diff = diff.Diff(o.Path+" (before)", f.Old, o.Path+" (after)", []byte(now))
	if o.DryRun {
		return res, nil
	}
	backup, err := f.Replace([]byte(now))
	if err != nil {
		return res, err
	}
	res.Backup = backup
	return res, nil
}

// setEntry gives a decoded entry its new command and args.
func setEntry(e map[string]any, command string, args []string, argsPresent bool) {
	e["command"] = command
	if !argsPresent {
		delete(e, "args")
		return
	}
	a := make([]any, len(args))
	for i, s := range args {
		a[i] = s
	}
	e["args"] = a
}

// wrappedAt tells whether s runs through the proxy: when it does, the
// index in args of its own command plus one (so args[:k-1] are the
// proxy's words and options); else 0.
func wrappedAt(s *server, command string) int {
	if s.args == nil || (s.cmd.s != command && filepath.Base(s.cmd.s) != "retval") {
		return 0
	}
	a := s.args.strings()
	if len(a) < 4 || a[0] != "mcp" || a[1] != "proxy" {
		return 0
	}
	i := slices.Index(a[2:], "--")
	if i < 0 || 2+i+1 >= len(a) {
		return 0
	}
	return 2 + i + 2
}

func (a *array) lexemes(src string) []string {
	out := make([]string, len(a.elems))
	for i, e := range a.elems {
		out[i] = src[e.start:e.end]
	}
	return out
}

func (a *array) strings() []string {
	if a == nil {
		return nil
	}
	out := make([]string, len(a.elems))
	for i, e := range a.elems {
		out[i] = e.s
	}
	return out
}

// list is a as a splice.List, for inserting and removing its elements
// in its own style.
func (a *array) list() splice.List {
	l := splice.List{Open: a.start, Close: a.end - 1}
	for _, e := range a.elems {
		l.Items = append(l.Items, splice.Span{Start: e.start, End: e.end})
	}
	return l
}

// equal compares two decoded documents.
func equal(a, b any) bool { return reflect.DeepEqual(a, b) }
