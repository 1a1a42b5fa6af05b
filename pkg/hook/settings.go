package hook

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/retval/retval/internal/jsondoc"
	"github.com/retval/retval/internal/userfile"
	"github.com/retval/retval/pkg/retain"
	"github.com/rogpeppe/go-internal/diff"
)

// Matcher is the tools the hook entry is for: Bash and every MCP tool.
const Matcher = "Bash|mcp__.*"

// Allowed are the permissions.allow entries that let the model read
// values through its Bash tool without a permission prompt.
var Allowed = []string{"Bash(retval peek:*)", "Bash(retval resolve:*)"}

// MaxSettingsSize bounds a settings file read for editing.
const MaxSettingsSize = 4 << 20

// BackupSuffix names the copy of a settings file as it was before an
// install or uninstall changed it.
const BackupSuffix = userfile.BackupSuffix

// UserSettings is the user's Claude Code settings file:
// $CLAUDE_CONFIG_DIR/settings.json when that is set, else
// ~/.claude/settings.json.
func UserSettings() (string, error) {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Abs(filepath.Join(d, "settings.json"))
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home directory: set HOME, or use --project DIR")
	}
	return filepath.Join(home, ".claude", "settings.json"), nil
}

// ProjectSettings is the settings file of the project in dir.
func ProjectSettings(dir string) (string, error) {
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
	return filepath.Join(abs, ".claude", "settings.json"), nil
}

// Command is the hook's command line for the retval binary at exe.
func Command(exe string) string { return retain.ShellQuote(exe) + " hook claude-code" }

// InstallOptions say where Install writes.
type InstallOptions struct {
	// Hooks is the settings file that gets the hook entry.
	Hooks string
	// Allow is the settings file that gets the permissions.allow entries:
	// the user's, since Claude Code ignores a project's allow list until
	// the folder is trusted (while it runs the project's hooks regardless).
	// "" adds none.
	Allow string
	// Command is the hook's command line (see Command).
	Command string
	// DryRun computes the changes and writes nothing.
	DryRun bool
}

// UninstallOptions say where Uninstall removes entries.
type UninstallOptions struct {
	// Hooks is the settings file whose hook entry is removed.
	Hooks string
	// Allow is the settings file whose permissions.allow entries are
	// removed; "" keeps them.
	Allow string
	// Command is the hook's command line as installed by this binary; an
	// entry running "… hook claude-code" with a program named retval is
	// removed whatever its path.
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
	// written, or the file did not exist.
	Backup string
	// Hook and Allow say which entries the file got or lost.
	Hook, Allow bool
}

// Install adds the hook entry
//
//	{"matcher":"Bash|mcp__.*","hooks":[{"type":"command","command":COMMAND}]}
//
// to hooks.PostToolUse in o.Hooks and the Allowed entries to
// permissions.allow in o.Allow, keeping everything else. It is idempotent:
// an entry already there is not added again (a retval hook entry with
// another command, from a binary since moved, is updated). A file that is
// not valid JSON, or whose hooks or permissions are not what Claude Code
// reads, is refused and left untouched.
func Install(o InstallOptions) ([]Change, error) {
	if o.Command == "" {
		return nil, errors.New("no hook command")
	}
	return edit(o.Hooks, o.Allow, o.DryRun, func(root *jsondoc.Node) (bool, error) {
		return addHook(root, o.Command)
	}, addAllow)
}

// Uninstall removes exactly what Install adds: the retval hook entries of
// o.Hooks and, when o.Allow is set, the Allowed entries of o.Allow.
// Objects and arrays left empty by the removal are removed too, so an
// install followed by an uninstall leaves the file as it was.
func Uninstall(o UninstallOptions) ([]Change, error) {
	return edit(o.Hooks, o.Allow, o.DryRun, func(root *jsondoc.Node) (bool, error) {
		return removeHook(root, o.Command)
	}, removeAllow)
}

// settingsFile is one settings file being edited.
type settingsFile struct {
	*userfile.File
	root   *jsondoc.Node
	indent string
	final  string // "\n" when the file ends with a newline
	change Change
}

func edit(hooksPath, allowPath string, dryRun bool, hookEdit, allowEdit func(*jsondoc.Node) (bool, error)) ([]Change, error) {
	if hooksPath == "" {
		return nil, errors.New("no settings file")
	}
	files := []*settingsFile{}
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
	if allowPath != "" {
		if af, err = load(allowPath); err != nil {
			return nil, err
		}
	}
	if hf.change.Hook, err = hookEdit(hf.root); err != nil {
		return nil, fmt.Errorf("%s: %v; fix it by hand", hf.Shown, err)
	}
	if af != nil {
		if af.change.Allow, err = allowEdit(af.root); err != nil {
			return nil, fmt.Errorf("%s: %v; fix it by hand", af.Shown, err)
		}
	}
	var out []Change
	for _, f := range files {
		var b strings.Builder
		f.root.Print(&b, f.indent, 0)
		b.WriteString(f.final)
		now := []byte(b.String())
		f.change.Changed = !bytes.Equal(now, f.Old)
		if !f.Exists && !f.change.Hook && !f.change.Allow {
			f.change.Changed = false // nothing to remove from a file that is not there
		}
		if f.change.Changed {
			f.change.Diff = diff.Diff(f.Shown+" (before)", f.Old, f.Shown+" (after)", now)
			if !dryRun {
				if err := f.write(now); err != nil {
					return out, partialWrite(out, err)
				}
			}
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
	f := &settingsFile{File: uf, indent: "  ", final: "\n"}
	f.change.Path = p
	if !uf.Exists {
		f.root = &jsondoc.Node{Kind: '{'}
		return f, nil
	}
	b := uf.Old
	if len(bytes.TrimSpace(b)) == 0 {
		f.root = &jsondoc.Node{Kind: '{'}
		return f, nil
	}
	root, err := jsondoc.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s is %v; it is left as it is: fix it, then run this again", p, err)
	}
	if root.Kind != '{' {
		return nil, fmt.Errorf("%s is not a JSON object; it is left as it is: fix it, then run this again", p)
	}
	f.root = root
	f.indent = jsondoc.Indent(b)
	if !bytes.HasSuffix(b, []byte("\n")) {
		f.final = ""
	}
	return f, nil
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

// write replaces the file with b atomically, after keeping a backup of
// what it held.
func (f *settingsFile) write(b []byte) error {
	backup, err := f.Replace(b)
	if err != nil {
		return err
	}
	f.change.Backup = backup
	return nil
}

// isRetvalHook reports whether an entry of a matcher group's hooks is a
// retval hook: a command hook running "… hook claude-code" with a program
// named retval (any path), or exactly command.
func isRetvalHook(h *jsondoc.Node, command string) bool {
	if h.Kind != '{' {
		return false
	}
	if t, _ := h.Get("type").Text(); t != "command" {
		return false
	}
	c, ok := h.Get("command").Text()
	if !ok {
		return false
	}
	if command != "" && c == command {
		return true
	}
	prog, ok := strings.CutSuffix(strings.TrimSpace(c), " hook claude-code")
	if !ok {
		return false
	}
	prog = strings.Trim(strings.TrimSpace(prog), `'"`)
	return filepath.Base(prog) == "retval"
}

// postToolUse returns hooks.PostToolUse, creating it when create is set;
// nil when it is absent.
func postToolUse(root *jsondoc.Node, create bool) (*jsondoc.Node, error) {
	if !create && root.Get("hooks") == nil {
		return nil, nil
	}
	hooks, err := jsondoc.ObjectAt(root, "hooks", "hooks")
	if err != nil {
		return nil, err
	}
	if !create && hooks.Get("PostToolUse") == nil {
		return nil, nil
	}
	return jsondoc.ArrayAt(hooks, "PostToolUse", "hooks.PostToolUse")
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

func addHook(root *jsondoc.Node, command string) (bool, error) {
	ptu, err := postToolUse(root, true)
	if err != nil {
		return false, err
	}
	for _, g := range ptu.Vals {
		hs := groupHooks(g)
		if hs == nil {
			continue
		}
		for _, h := range hs.Vals {
			if isRetvalHook(h, command) {
				if c, _ := h.Get("command").Text(); c != command {
					h.Set("command", jsondoc.String(command))
					return true, nil
				}
				return false, nil
			}
		}
	}
	entry := &jsondoc.Node{Kind: '{'}
	entry.Set("type", jsondoc.String("command"))
	entry.Set("command", jsondoc.String(command))
	group := &jsondoc.Node{Kind: '{'}
	group.Set("matcher", jsondoc.String(Matcher))
	group.Set("hooks", &jsondoc.Node{Kind: '[', Vals: []*jsondoc.Node{entry}})
	ptu.Vals = append(ptu.Vals, group)
	return true, nil
}

func removeHook(root *jsondoc.Node, command string) (bool, error) {
	ptu, err := postToolUse(root, false)
	if ptu == nil || err != nil {
		return false, err
	}
	removed := false
	var groups []*jsondoc.Node
	for _, g := range ptu.Vals {
		hs := groupHooks(g)
		if hs == nil {
			groups = append(groups, g)
			continue
		}
		var keep []*jsondoc.Node
		for _, h := range hs.Vals {
			if isRetvalHook(h, command) {
				removed = true
				continue
			}
			keep = append(keep, h)
		}
		if len(keep) < len(hs.Vals) && len(keep) == 0 {
			continue // the group held only retval's hook
		}
		hs.Vals = keep
		groups = append(groups, g)
	}
	if !removed {
		return false, nil
	}
	ptu.Vals = groups
	hooks := root.Get("hooks")
	if len(ptu.Vals) == 0 {
		hooks.Del("PostToolUse")
	}
	if len(hooks.Vals) == 0 {
		root.Del("hooks")
	}
	return true, nil
}

func addAllow(root *jsondoc.Node) (bool, error) {
	perms, err := jsondoc.ObjectAt(root, "permissions", "permissions")
	if err != nil {
		return false, err
	}
	allow, err := jsondoc.ArrayAt(perms, "allow", "permissions.allow")
	if err != nil {
		return false, err
	}
	added := false
	for _, want := range Allowed {
		found := false
		for _, v := range allow.Vals {
			if s, _ := v.Text(); s == want {
				found = true
			}
		}
		if !found {
			allow.Vals = append(allow.Vals, jsondoc.String(want))
			added = true
		}
	}
	return added, nil
}

func removeAllow(root *jsondoc.Node) (bool, error) {
	perms := root.Get("permissions")
	if perms == nil || perms.Kind != '{' {
		return false, nil
	}
	allow := perms.Get("allow")
	if allow == nil || allow.Kind != '[' {
		return false, nil
	}
	var keep []*jsondoc.Node
	for _, v := range allow.Vals {
		s, _ := v.Text()
		if isAllowed(s) {
			continue
		}
		keep = append(keep, v)
	}
	if len(keep) == len(allow.Vals) {
		return false, nil
	}
	allow.Vals = keep
	if len(keep) == 0 {
		perms.Del("allow")
	}
	if len(perms.Vals) == 0 {
		root.Del("permissions")
	}
	return true, nil
}

func isAllowed(s string) bool {
	for _, a := range Allowed {
		if s == a {
			return true
		}
	}
	return false
}
