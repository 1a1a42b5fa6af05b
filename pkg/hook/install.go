package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/retval/retval/internal/jsondoc"
	"github.com/retval/retval/internal/userfile"
	"github.com/retval/retval/pkg/retain"
	"github.com/rogpeppe/go-internal/diff"
)

// What every agent's installer shares: an agent whose settings file holds
// hooks as Claude Code's does —
//
//	{"hooks": {EVENT: [{"matcher": M, "hooks": [{"type": "command", "command": C}]}]}}
//
// (Claude Code, Gemini CLI and Codex's hooks.json do) — and, optionally,
// a list of allowed tool calls, gets its entries added and removed here.
// The agent says which events, matchers and allow entries (a Settings);
// the file is edited in place (internal/jsondoc), so every byte that is
// not retval's stays as it was, and an install followed by an uninstall
// leaves the file byte for byte as it was — or absent, if it was.

// MaxSettingsSize bounds a settings file read for editing.
const MaxSettingsSize = 4 << 20

// BackupSuffix names the copy of a settings file as it was before an
// install or uninstall changed it.
const BackupSuffix = userfile.BackupSuffix

// NoteSuffix names the note install keeps beside a settings file (beside
// a symlink's target) of what it added there, so that uninstall removes
// that and nothing else. Uninstall removes the note.
const NoteSuffix = ".retval-added"

// Settings is what retval adds to one agent's settings file, and where
// that file is.
type Settings struct {
	// Agent names the agent in messages ("Claude Code"); Name is the
	// agent's hook as `retval hook NAME` names it, which is how retval's
	// hook entries are told from others (see Command).
	Agent, Name string
	// Hooks are the hook entries: one matcher group per event.
	Hooks []HookEntry
	// AllowAt is the path of the array of allowed calls
	// (permissions.allow); Allowed are the entries retval adds there.
	AllowAt []string
	Allowed []string
	// AllowedFor says what the allow entries let the model run, in
	// messages ("retval peek and retval resolve").
	AllowedFor string
	// AllowInUser, when set, says why the allow entries go into the
	// user's file also for a project's install.
	AllowInUser string
	// UserFile and ProjectFile name the user's settings file and the
	// settings file of the project in a directory.
	UserFile    func() (string, error)
	ProjectFile func(dir string) (string, error)
}

// Command is the hook's command line for the retval binary at exe. The
// path is written with forward slashes: Claude Code on Windows runs a
// hook's command with Git Bash (bash -c), where a backslash is an escape,
// and Windows takes C:/Users/me/retval.exe as well.
func (s *Settings) Command(exe string) string {
	return retain.ShellQuote(filepath.ToSlash(exe)) + " hook " + s.Name
}

// ours reports whether a hook command runs retval's hook for this agent,
// whatever the program's path and the arguments after it.
func (s *Settings) ours(command string) bool { return isRetvalHook(command, s.Name, false) }

// installForm reports whether a hook command is one an install wrote
// (the program and the hook's words, nothing else): one from a binary
// since moved is updated in place.
func (s *Settings) installForm(command string) bool { return isRetvalHook(command, s.Name, true) }

// projectFile is the file at dir/elem..., for a dir that exists.
func projectFile(dir string, elem ...string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("project %s: %v", dir, errors.Unwrap(err))
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("project %s is not a directory", dir)
	}
	return filepath.Join(append([]string{abs}, elem...)...), nil
}

// HookEntry is one matcher group retval adds under hooks.EVENT.
type HookEntry struct {
	Event, Matcher string
}

// InstallOptions say where Install writes.
type InstallOptions struct {
	// Hooks is the settings file that gets the hook entry.
	Hooks string
	// Allow is the settings file that gets the allow entries: for Claude
	// Code the user's, since it ignores a project's permissions.allow
	// until the folder is trusted (while it runs the project's hooks
	// regardless). "" adds none.
	Allow string
	// Command is the hook's command line (see Command).
	Command string
	// DryRun computes the changes and writes nothing.
	DryRun bool
}

// UninstallOptions say where Uninstall removes entries.
type UninstallOptions struct {
	// Hooks is the settings file whose hook entries are removed.
	Hooks string
	// Allow is the settings file whose allow entries are removed; ""
	// keeps them.
	Allow string
	// Command is the hook's command line as installed by this binary.
	// Unused: retval's entries are found whatever their program's path.
	Command string
	// DryRun computes the changes and writes nothing.
	DryRun bool
}

// Change is what an install or uninstall did to one settings file.
type Change struct {
	Path    string
	Changed bool
	// Diff is a unified diff of the change (empty when nothing changed).
	Diff []byte
	// Backup is the copy of the file as it was; "" when nothing was
	// written, the file did not exist, or uninstall removed the file
	// install had made.
	Backup string
	// Hook and Allow say which entries the file got or lost; AllowEntries
	// are the allow entries.
	Hook, Allow  bool
	AllowEntries []string
	// Created: install made the file. Deleted: uninstall removed it, as
	// install had made it and nothing else is left in it.
	Created, Deleted bool
	// Own is the command of a retval hook entry that was in the file
	// before install (written by hand, with arguments of its own):
	// install adds no second one, and uninstall keeps it.
	Own string
	// KeptAllow are allow entries uninstall left in place because no note
	// says install added them (they were there before it, or an older
	// retval added them).
	KeptAllow []string
}

// note is what install added to one settings file, kept beside it.
type note struct {
	// Created: the file did not exist, or held only white space (Blank),
	// before install; Dirs are the directories install made for it.
	Created bool     `json:"created,omitempty"`
	Blank   string   `json:"blank,omitempty"`
	Dirs    []string `json:"dirs,omitempty"`
	// Made are the members install created to hold its entries, as
	// dotted paths ("hooks", "hooks.PostToolUse").
	Made []string `json:"made,omitempty"`
	// Before are the events that had a retval hook entry of the user's
	// before install; their entries stay.
	Before []string `json:"before,omitempty"`
	// Hooks are the events whose retval entry install added.
	Hooks []string `json:"hooks,omitempty"`
	// Allow are the allow entries install added.
	Allow []string `json:"allow,omitempty"`
}

// empty reports whether the note notes no entry: what it says of the
// file and its members matters only while an entry of retval's is there.
func (n *note) empty() bool {
	return len(n.Hooks) == 0 && len(n.Allow) == 0 && len(n.Before) == 0
}

// settingsFile is one settings file being edited.
type settingsFile struct {
	*userfile.File
	doc      *jsondoc.Doc
	note     *note // nil when there is none
	noteFile *userfile.File
	change   Change
}

// Install adds s's hook entries to hooks.EVENT in o.Hooks and its allow
// entries to o.Allow, keeping everything else. It is idempotent: an entry
// already there is not added again (a retval entry in install's own form
// from a binary since moved is updated; one with arguments of the user's
// is kept as it is). A file that is not valid JSON, or whose members on
// the way are not what the agent reads, is refused and left untouched.
func (s *Settings) Install(o InstallOptions) ([]Change, error) {
	if o.Command == "" {
		return nil, errors.New("no hook command")
	}
	return s.edit(o.Hooks, o.Allow, o.DryRun, true, func(f *settingsFile) error { return s.addHooks(f, o.Command) }, s.addAllow)
}

// Uninstall removes what Install added: retval's hook entries from
// o.Hooks (all but those that were there before install) and, when
// o.Allow is set, the allow entries its note says install added, then
// the members install made that are left empty. A file install made and
// that holds nothing else is removed, with the directories made for it.
func (s *Settings) Uninstall(o UninstallOptions) ([]Change, error) {
	return s.edit(o.Hooks, o.Allow, o.DryRun, false, s.removeHooks, s.removeAllow)
}

func (s *Settings) edit(hooksPath, allowPath string, dryRun, install bool, hookEdit, allowEdit func(*settingsFile) error) ([]Change, error) {
	if hooksPath == "" {
		return nil, errors.New("no settings file")
	}
	var files []*settingsFile
	load := func(p string) (*settingsFile, error) {
		for _, f := range files {
			if f.Shown == p {
				return f, nil
			}
		}
		f, err := loadSettings(p)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		return f, nil
	}
	// Read and check every file before changing any.
	hf, err := load(hooksPath)
	if err != nil {
		return nil, err
	}
	var af *settingsFile
	if allowPath != "" && len(s.Allowed) > 0 {
		if af, err = load(allowPath); err != nil {
			return nil, err
		}
	}
	if err := hookEdit(hf); err != nil {
		return nil, fmt.Errorf("%s: %v; fix it by hand", hf.Shown, err)
	}
	if af != nil {
		if err := allowEdit(af); err != nil {
			return nil, fmt.Errorf("%s: %v; fix it by hand", af.Shown, err)
		}
	}
	var out []Change
	for _, f := range files {
		if err := f.finish(install, dryRun); err != nil {
			return out, partialWrite(out, err)
		}
		out = append(out, f.change)
	}
	return out, nil
}

func loadSettings(p string) (*settingsFile, error) {
	uf, err := userfile.Load(p, MaxSettingsSize)
	if err != nil {
		return nil, err
	}
	f := &settingsFile{File: uf}
	f.change.Path = p
	src := uf.Old
	if len(bytes.TrimSpace(src)) == 0 {
		src = []byte("{}\n")
	}
	f.doc, err = jsondoc.NewDoc(src)
	var se *jsondoc.SyntaxError
	var de *jsondoc.DuplicateKeyError
	switch {
	case errors.As(err, &se):
		return nil, fmt.Errorf("%s is not valid JSON: line %d, column %d: %v; it is left as it is: fix it, then run this again", p, se.Line, se.Column, se.Err)
	case errors.As(err, &de):
		return nil, fmt.Errorf("%s names the key %q twice in one object (which one is read is not certain); it is left as it is: remove one, then run this again", p, de.Key)
	case err != nil:
		return nil, fmt.Errorf("%s: %v; it is left as it is", p, err)
	case f.doc.Root.Kind != '{':
		return nil, fmt.Errorf("%s is not a JSON object; it is left as it is: fix it, then run this again", p)
	}
	if f.noteFile, err = userfile.Load(uf.Path+NoteSuffix, MaxSettingsSize); err != nil {
		return nil, err
	}
	if f.noteFile.Exists && uf.Exists {
		// (The note of a file that is gone is stale: finish removes it.)
		f.note = new(note)
		if err := json.Unmarshal(f.noteFile.Old, f.note); err != nil {
			return nil, fmt.Errorf("%s is not the note retval keeps of what it added to %s (%v): remove it, then run this again", f.noteFile.Path, p, err)
		}
	}
	return f, nil
}

// noted returns the file's note, making an empty one for install.
func (f *settingsFile) noted() *note {
	if f.note == nil {
		f.note = new(note)
		if !f.Exists || len(bytes.TrimSpace(f.Old)) == 0 {
			f.note.Created, f.note.Blank = true, string(f.Old)
		}
	}
	return f.note
}

// finish writes the file and its note as edited: for install the note
// first, so that what is in the file is always noted; for uninstall the
// file first, so that what is noted is always still there to remove.
func (f *settingsFile) finish(install, dryRun bool) error {
	if !f.Exists && f.noteFile.Exists && !dryRun {
		if err := f.noteFile.Remove(nil); err != nil {
			return err
		}
		f.noteFile.Exists = false
	}
	now := f.doc.Bytes()
	n := f.note
	removed := f.change.Hook || f.change.Allow
	if !install && removed && n != nil && n.Created && len(f.doc.Root.Vals) == 0 {
		// Install made the file and nothing else is in it: it goes, or
		// gets back the white space it held.
		if n.Blank != "" {
			now = []byte(n.Blank)
		} else {
			now, f.change.Deleted = nil, true
		}
	}
	if f.Exists {
		f.change.Changed = f.change.Deleted || !bytes.Equal(now, f.Old)
	} else {
		f.change.Changed = install && removed // added, that is
	}
	if f.change.Changed {
		f.change.Created = install && !f.Exists
		f.change.Diff = diff.Diff(f.Shown+" (before)", f.Old, f.Shown+" (after)", now)
	}
	noteChanged := n != nil && f.noteText() != string(f.noteFile.Old)
	if dryRun || !f.change.Changed && !noteChanged {
		return nil
	}
	if install {
		if f.change.Created {
			n.Dirs = append(n.Dirs, f.MissingDirs()...)
		}
		if err := f.writeNote(); err != nil {
			return err
		}
		if !f.change.Changed {
			return nil
		}
		backup, err := f.Replace(now)
		if err != nil {
			f.restoreNote()
			return err
		}
		f.change.Backup = backup
		return nil
	}
	switch {
	case f.change.Deleted:
		// Nothing of the user's was ever in it: neither it nor a backup
		// of it stays.
		os.Remove(f.Path + BackupSuffix)
		if err := f.File.Remove(nil); err != nil {
			return err
		}
		if err := f.noteFile.Remove(nil); err != nil {
			return err
		}
		userfile.RemoveEmptyDirs(n.Dirs)
		return nil
	case f.change.Changed:
		backup, err := f.Replace(now)
		if err != nil {
			return err
		}
		f.change.Backup = backup
	}
	return f.writeNote()
}

// noteText is the note as written to its file ("" for an empty one).
func (f *settingsFile) noteText() string {
	if f.note == nil || f.note.empty() {
		return ""
	}
	b, _ := json.MarshalIndent(f.note, "", "  ")
	return string(b) + "\n"
}

// writeNote writes the note beside the file, or removes it once it notes
// nothing (with the directories made for the file, when the file is gone).
func (f *settingsFile) writeNote() error {
	if f.note == nil {
		return nil
	}
	text := f.noteText()
	if text == "" {
		if !f.noteFile.Exists {
			return nil
		}
		return f.noteFile.Remove(nil)
	}
	if err := f.noteFile.Write([]byte(text)); err != nil {
		return fmt.Errorf("noting what retval adds to %s: %v; nothing changed", f.Shown, err)
	}
	return nil
}

// restoreNote puts the note back as it was after a failed write.
func (f *settingsFile) restoreNote() {
	if f.noteFile.Exists {
		f.noteFile.Write(f.noteFile.Old)
		return
	}
	f.noteFile.Remove(nil)
}

// partialWrite is the error of a write that failed after other files of
// the same install or uninstall were written: it names them and their
// backups, and says that running the command again finishes the job
// (install and uninstall only do what is still missing).
func partialWrite(done []Change, err error) error {
	var written []string
	for _, c := range done {
		if c.Changed && c.Backup != "" {
			written = append(written, fmt.Sprintf("%s (backup %s)", c.Path, c.Backup))
		} else if c.Changed {
			written = append(written, c.Path)
		}
	}
	if len(written) == 0 {
		return err
	}
	return fmt.Errorf("%w; %s was already written: fix the cause and run the same command again to finish", err, strings.Join(written, " and "))
}

// container returns the object or array at path below the root, creating
// what is missing when create is set (noting each member it makes); nil
// when it is absent and create is not set. Something that is there but
// of the other kind is an error naming it.
func (f *settingsFile) container(path []string, kind byte, create bool) (*jsondoc.Node, error) {
	n := f.doc.Root
	for i, k := range path {
		want := byte('{')
		if i == len(path)-1 {
			want = kind
		}
		v := n.Get(k)
		if v == nil && !create {
			return nil, nil
		}
		if v == nil {
			if err := f.doc.Insert(n, len(n.Vals), k, &jsondoc.Node{Kind: want}); err != nil {
				return nil, err
			}
			f.noted().Made = appendNew(f.note.Made, strings.Join(path[:i+1], "."))
			// Edits parse the document again: find the way down anew.
			return f.container(path, kind, create)
		}
		if v.Kind != want {
			what := "an object"
			if want == '[' {
				what = "an array"
			}
			return nil, fmt.Errorf("%w: %s is not %s", jsondoc.ErrShape, strings.Join(path[:i+1], "."), what)
		}
		n = v
	}
	return n, nil
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// groupHooks returns the hooks array of a matcher group, or nil when the
// group is not one retval can read.
func groupHooks(g *jsondoc.Node) *jsondoc.Node {
	if g.Kind != '{' {
		return nil
	}
	if hs := g.Get("hooks"); hs != nil && hs.Kind == '[' {
		return hs
	}
	return nil
}

// commandOf is the command of a command hook entry.
func commandOf(h *jsondoc.Node) (string, bool) {
	if h.Kind != '{' {
		return "", false
	}
	if t, _ := h.Get("type").Text(); t != "command" {
		return "", false
	}
	return h.Get("command").Text()
}

// findOurs returns retval's hook entry in an event's groups: the group's
// and the entry's indexes, or -1, -1.
func (s *Settings) findOurs(groups *jsondoc.Node) (gi, hi int) {
	for gi, g := range groups.Vals {
		hs := groupHooks(g)
		if hs == nil {
			continue
		}
		for hi, h := range hs.Vals {
			if c, ok := commandOf(h); ok && s.ours(c) {
				return gi, hi
			}
		}
	}
	return -1, -1
}

func (s *Settings) addHooks(f *settingsFile, command string) error {
	for _, e := range s.Hooks {
		groups, err := f.container([]string{"hooks", e.Event}, '[', false)
		if err != nil {
			return err
		}
		if groups != nil {
			if gi, hi := s.findOurs(groups); gi >= 0 {
				h := groupHooks(groups.Vals[gi]).Vals[hi]
				c, _ := commandOf(h)
				switch {
				case c == command:
				case s.installForm(c):
					// From a binary since moved: the entry follows it.
					if err := f.doc.Replace(h.Get("command"), jsondoc.String(command)); err != nil {
						return err
					}
					f.change.Hook = true
				default:
					f.change.Own = c
					if f.note == nil || !slices.Contains(f.note.Hooks, e.Event) {
						f.noted().Before = appendNew(f.note.Before, e.Event)
					}
				}
				continue
			}
		}
		if groups, err = f.container([]string{"hooks", e.Event}, '[', true); err != nil {
			return err
		}
		entry := &jsondoc.Node{Kind: '{'}
		entry.Set("type", jsondoc.String("command"))
		entry.Set("command", jsondoc.String(command))
		group := &jsondoc.Node{Kind: '{'}
		if e.Matcher != "" { // SessionStart: every source
			group.Set("matcher", jsondoc.String(e.Matcher))
		}
		group.Set("hooks", &jsondoc.Node{Kind: '[', Vals: []*jsondoc.Node{entry}})
		if err := f.doc.Insert(groups, len(groups.Vals), "", group); err != nil {
			return err
		}
		f.noted().Hooks = appendNew(f.note.Hooks, e.Event)
		f.note.Before = slices.DeleteFunc(f.note.Before, func(b string) bool { return b == e.Event })
		f.change.Hook = true
	}
	return nil
}

func (s *Settings) removeHooks(f *settingsFile) error {
	for _, e := range s.Hooks {
		if f.note != nil && slices.Contains(f.note.Before, e.Event) {
			if groups, _ := f.container([]string{"hooks", e.Event}, '[', false); groups != nil {
				if gi, hi := s.findOurs(groups); gi >= 0 {
					f.change.Own, _ = commandOf(groupHooks(groups.Vals[gi]).Vals[hi])
				}
			}
			continue
		}
		for {
			groups, err := f.container([]string{"hooks", e.Event}, '[', false)
			if err != nil || groups == nil {
				return err
			}
			gi, hi := s.findOurs(groups)
			if gi < 0 {
				break
			}
			f.change.Hook = true
			if len(groupHooks(groups.Vals[gi]).Vals) == 1 {
				err = f.doc.Remove(groups, gi) // the group held only retval's hook
			} else {
				err = f.doc.Remove(groupHooks(groups.Vals[gi]), hi)
			}
			if err != nil {
				return err
			}
		}
		if f.note != nil {
			f.note.Hooks = slices.DeleteFunc(f.note.Hooks, func(h string) bool { return h == e.Event })
		}
		if err := f.dropEmpty([]string{"hooks", e.Event}); err != nil {
			return err
		}
	}
	return nil
}

func (s *Settings) addAllow(f *settingsFile) error {
	allow, err := f.container(s.AllowAt, '[', true)
	if err != nil {
		return err
	}
	for _, want := range s.Allowed {
		if slices.ContainsFunc(allow.Vals, func(v *jsondoc.Node) bool { t, _ := v.Text(); return t == want }) {
			continue
		}
		if err := f.doc.Insert(allow, len(allow.Vals), "", jsondoc.String(want)); err != nil {
			return err
		}
		f.noted().Allow = appendNew(f.note.Allow, want)
		f.change.Allow = true
		f.change.AllowEntries = append(f.change.AllowEntries, want)
		if allow, err = f.container(s.AllowAt, '[', false); err != nil {
			return err
		}
	}
	return nil
}

func (s *Settings) removeAllow(f *settingsFile) error {
	for _, want := range s.Allowed {
		allow, err := f.container(s.AllowAt, '[', false)
		if err != nil || allow == nil {
			return nil // nothing of retval's there to remove
		}
		i := slices.IndexFunc(allow.Vals, func(v *jsondoc.Node) bool { t, _ := v.Text(); return t == want })
		if i < 0 {
			if f.note != nil {
				f.note.Allow = slices.DeleteFunc(f.note.Allow, func(a string) bool { return a == want })
			}
			continue
		}
		if f.note == nil || !slices.Contains(f.note.Allow, want) {
			f.change.KeptAllow = append(f.change.KeptAllow, want)
			continue
		}
		// The last one: install appends.
		for j := len(allow.Vals) - 1; j > i; j-- {
			if t, _ := allow.Vals[j].Text(); t == want {
				i = j
				break
			}
		}
		if err := f.doc.Remove(allow, i); err != nil {
			return err
		}
		f.note.Allow = slices.DeleteFunc(f.note.Allow, func(a string) bool { return a == want })
		f.change.Allow = true
		f.change.AllowEntries = append(f.change.AllowEntries, want)
	}
	return f.dropEmpty(s.AllowAt)
}

// dropEmpty removes the members on path, innermost first, that are left
// empty and that install made (without a note, any left empty: an older
// retval's install made them).
func (f *settingsFile) dropEmpty(path []string) error {
	for i := len(path); i > 0; i-- {
		parent, err := f.container(path[:i-1], '{', false)
		if err != nil || parent == nil {
			return nil
		}
		v := parent.Get(path[i-1])
		name := strings.Join(path[:i], ".")
		if v == nil || len(v.Vals) > 0 || v.Kind == 0 {
			return nil
		}
		if f.note != nil && !slices.Contains(f.note.Made, name) {
			return nil
		}
		if err := f.doc.Remove(parent, slices.Index(parent.Keys, path[i-1])); err != nil {
			return err
		}
		if f.note != nil {
			f.note.Made = slices.DeleteFunc(f.note.Made, func(m string) bool { return m == name })
		}
	}
	return nil
}

// isRetvalHook reports whether a hook command runs retval's hook for
// agent: a program named retval (any path, after any VAR=value
// assignments), then "hook" and agent, then (unless installForm) any
// arguments but install and uninstall.
func isRetvalHook(command, agent string, installForm bool) bool {
	w, ok := shellWords(command)
	all := len(w)
	for ok && len(w) > 0 && strings.Contains(w[0], "=") && !strings.Contains(w[0], "/") {
		w = w[1:]
	}
	if !ok || len(w) < 3 || !isRetvalProgram(w[0]) || w[1] != "hook" || w[2] != agent {
		return false
	}
	if installForm {
		return all == 3
	}
	return len(w) == 3 || w[3] != "install" && w[3] != "uninstall"
}

// isRetvalProgram reports whether the program path p is retval's:
// "retval", or "retval.exe" as Windows names it (any case there).
func isRetvalProgram(p string) bool {
	base := filepath.Base(filepath.FromSlash(p))
	if ext := filepath.Ext(base); strings.EqualFold(ext, ".exe") {
		base = strings.TrimSuffix(base, ext)
	}
	return base == "retval"
}

// shellWords splits a command line into words as a POSIX shell does for
// plain words and quoting ('…', "…", backslash); ok is false for one it
// cannot split (an unterminated quote).
func shellWords(s string) (words []string, ok bool) {
	var w strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words, in = append(words, w.String()), false
				w.Reset()
			}
			continue
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, false
			}
		case c == '\\':
			if i+1 >= len(s) {
				return nil, false
			}
			i++
			w.WriteByte(s[i])
		default:
			w.WriteByte(c)
		}
		in = true
	}
	if in {
		words = append(words, w.String())
	}
	return words, true
}
