package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retval/retval/internal/testenv"
)

const cmdA = "/usr/local/bin/retval hook claude-code"

// original is a settings file as Claude Code writes it, with settings and
// hooks of its own that must survive.
const original = `{
  "model": "opus",
  "env": {
    "FOO": "b\u00e4r \u003c1\u003e",
    "N": 1.50
  },
  "permissions": {
    "allow": [
      "Bash(npm test:*)"
    ],
    "deny": []
  },
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Edit",
        "hooks": [
          {
            "type": "command",
            "command": "prettier --write"
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "notify"
          }
        ]
      }
    ]
  }
}
`

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// settingsOf decodes a settings file into what Claude Code reads.
type settingsOf struct {
	Permissions struct {
		Allow []string `json:"allow"`
	} `json:"permissions"`
	Hooks struct {
		PostToolUse  []matcherGroup `json:"PostToolUse"`
		PreToolUse   []matcherGroup `json:"PreToolUse"`
		SessionStart []matcherGroup `json:"SessionStart"`
	} `json:"hooks"`
}

type matcherGroup struct {
	Matcher string `json:"matcher"`
	Hooks   []struct {
		Type, Command string
	} `json:"hooks"`
}

func decodeSettings(t *testing.T, p string) settingsOf {
	t.Helper()
	var s settingsOf
	if err := json.Unmarshal([]byte(read(t, p)), &s); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return s
}

// retvalHooks counts the groups running cmd with the PostToolUse matcher;
// it fails the test when the PreToolUse and SessionStart entries do not
// stand beside each of them.
func retvalHooks(s settingsOf, cmd string) int {
	count := func(groups []matcherGroup, matcher string) int {
		n := 0
		for _, g := range groups {
			for _, h := range g.Hooks {
				if h.Command == cmd && h.Type == "command" && g.Matcher == matcher {
					n++
				}
			}
		}
		return n
	}
	n := count(s.Hooks.PostToolUse, Matcher)
	if count(s.Hooks.PreToolUse, PreMatcher) != n || count(s.Hooks.SessionStart, "") != n {
		return -1
	}
	return n
}

// The user scope: hook and allow entries in one file; installing twice
// changes nothing; uninstalling leaves the file byte for byte as it was.
func TestInstallUserRoundTrip(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".claude", "settings.json")
	write(t, p, original)
	ch, err := Install(InstallOptions{Hooks: p, Allow: p, Command: cmdA})
	if err != nil {
		t.Fatal(err)
	}
	if len(ch) != 1 || !ch[0].Changed || !ch[0].Hook || !ch[0].Allow || ch[0].Backup != p+BackupSuffix {
		t.Fatalf("changes %+v", ch)
	}
	if read(t, p+BackupSuffix) != original {
		t.Error("the backup is not the file as it was")
	}
	s := decodeSettings(t, p)
	if retvalHooks(s, cmdA) != 1 || len(s.Hooks.PostToolUse) != 2 {
		t.Errorf("hooks: %+v", s.Hooks)
	}
	if strings.Join(s.Permissions.Allow, ",") != "Bash(npm test:*),Bash(retval peek:*),Bash(retval resolve:*)" {
		t.Errorf("allow: %v", s.Permissions.Allow)
	}
	got := read(t, p)
	for _, keep := range []string{`"FOO": "b\u00e4r \u003c1\u003e"`, `"N": 1.50`, `"deny": []`, `"command": "notify"`, `"command": "prettier --write"`} {
		if !strings.Contains(got, keep) {
			t.Errorf("lost %s:\n%s", keep, got)
		}
	}
	installed := got
	st, _ := os.Stat(p)
	ch, err = Install(InstallOptions{Hooks: p, Allow: p, Command: cmdA})
	if err != nil || ch[0].Changed {
		t.Fatalf("second install: %+v %v", ch, err)
	}
	if st2, _ := os.Stat(p); read(t, p) != installed || !st2.ModTime().Equal(st.ModTime()) {
		t.Error("a second install rewrote the file")
	}
	ch, err = Uninstall(UninstallOptions{Hooks: p, Allow: p, Command: cmdA})
	if err != nil || !ch[0].Changed || !ch[0].Hook || !ch[0].Allow {
		t.Fatalf("uninstall: %+v %v", ch, err)
	}
	if got := read(t, p); got != original {
		t.Errorf("after uninstall:\n%s\nwant the original:\n%s", got, original)
	}
	if read(t, p+BackupSuffix) != installed {
		t.Error("the backup is not the file as uninstall found it")
	}
	ch, err = Uninstall(UninstallOptions{Hooks: p, Allow: p, Command: cmdA})
	if err != nil || ch[0].Changed {
		t.Errorf("second uninstall: %+v %v", ch, err)
	}
}

// The project scope: the hook in the project's file, the allow entries in
// the user's (a project's allow list is ignored until it is trusted).
func TestInstallProject(t *testing.T) {
	tmp := t.TempDir()
	proj := filepath.Join(tmp, "proj", ".claude", "settings.json")
	user := filepath.Join(tmp, "home", ".claude", "settings.json")
	write(t, proj, original)
	for i := 0; i < 2; i++ {
		ch, err := Install(InstallOptions{Hooks: proj, Allow: user, Command: cmdA})
		if err != nil {
			t.Fatal(err)
		}
		if len(ch) != 2 || ch[0].Path != proj || ch[1].Path != user || ch[0].Changed != (i == 0) || ch[1].Changed != (i == 0) {
			t.Fatalf("install %d: %+v", i+1, ch)
		}
	}
	ps, us := decodeSettings(t, proj), decodeSettings(t, user)
	if retvalHooks(ps, cmdA) != 1 || len(us.Hooks.PostToolUse) != 0 {
		t.Errorf("the hook is not in the project alone: %+v / %+v", ps.Hooks, us.Hooks)
	}
	if strings.Join(ps.Permissions.Allow, ",") != "Bash(npm test:*)" || strings.Join(us.Permissions.Allow, ",") != "Bash(retval peek:*),Bash(retval resolve:*)" {
		t.Errorf("allow: project %v, user %v", ps.Permissions.Allow, us.Permissions.Allow)
	}
	if got, want := read(t, user), "{\n  \"permissions\": {\n    \"allow\": [\n      \"Bash(retval peek:*)\",\n      \"Bash(retval resolve:*)\"\n    ]\n  }\n}\n"; got != want {
		t.Errorf("new user file:\n%s", got)
	}
	if _, err := os.Stat(user + BackupSuffix); err == nil {
		t.Error("a backup of a file that did not exist")
	}
	if _, err := Uninstall(UninstallOptions{Hooks: proj, Command: cmdA}); err != nil {
		t.Fatal(err)
	}
	if read(t, proj) != original {
		t.Errorf("project after uninstall:\n%s", read(t, proj))
	}
	if us := decodeSettings(t, user); len(us.Permissions.Allow) != 2 {
		t.Error("uninstall of a project removed the user's allow entries")
	}
}

func TestInstallNewFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "p", ".claude", "settings.json")
	if _, err := Install(InstallOptions{Hooks: p, Command: "'/opt/my tools/retval' hook claude-code"}); err != nil {
		t.Fatal(err)
	}
	want := `{
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Bash|mcp__.*|Write|Edit|MultiEdit|NotebookEdit",
        "hooks": [
          {
            "type": "command",
            "command": "'/opt/my tools/retval' hook claude-code"
          }
        ]
      }
    ],
    "PreToolUse": [
      {
        "matcher": "Write|Edit|MultiEdit|NotebookEdit|Bash|mcp__.*",
        "hooks": [
          {
            "type": "command",
            "command": "'/opt/my tools/retval' hook claude-code"
          }
        ]
      }
    ],
    "SessionStart": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "'/opt/my tools/retval' hook claude-code"
          }
        ]
      }
    ]
  }
}
`
	if got := read(t, p); got != want {
		t.Errorf("got\n%s", got)
	}
	// A retval binary at another path is the same hook: uninstall finds
	// it, and takes away the file and the directories install made.
	if ch, err := Uninstall(UninstallOptions{Hooks: p, Command: cmdA}); err != nil || !ch[0].Changed || !ch[0].Deleted {
		t.Fatalf("%+v %v", ch, err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(filepath.Dir(filepath.Dir(p)))); len(ents) != 0 {
		t.Errorf("after uninstall: %v left", ents)
	}
}

// A binary that moved: installing from the new path updates the entry.
func TestInstallMovedBinary(t *testing.T) {
	p := filepath.Join(t.TempDir(), "settings.json")
	write(t, p, original)
	Install(InstallOptions{Hooks: p, Command: cmdA})
	const cmdB = "/home/u/go/bin/retval hook claude-code"
	ch, err := Install(InstallOptions{Hooks: p, Command: cmdB})
	if err != nil || !ch[0].Changed {
		t.Fatalf("%+v %v", ch, err)
	}
	s := decodeSettings(t, p)
	if retvalHooks(s, cmdB) != 1 || retvalHooks(s, cmdA) != 0 {
		t.Errorf("hooks: %+v", s.Hooks)
	}
}

// Uninstall removes retval's hook alone, also from a group a person
// merged other hooks into.
func TestUninstallSharedGroup(t *testing.T) {
	p := filepath.Join(t.TempDir(), "settings.json")
	write(t, p, `{"hooks":{"PostToolUse":[{"matcher":"Bash|mcp__.*","hooks":[{"type":"command","command":"logger"},{"type":"command","command":"retval hook claude-code"}]}]}}`)
	if _, err := Uninstall(UninstallOptions{Hooks: p}); err != nil {
		t.Fatal(err)
	}
	want := `{"hooks":{"PostToolUse":[{"matcher":"Bash|mcp__.*","hooks":[{"type":"command","command":"logger"}]}]}}`
	if got := read(t, p); got != want {
		t.Errorf("got\n%s", got)
	}
}

// Files retval cannot edit safely are refused and left as they were.
func TestInstallRefuses(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"not JSON", "{\"model\": \"opus\",\n", "is not valid JSON"},
		{"comment", "// mine\n{}", "is not valid JSON"},
		{"not an object", "[]", "is not a JSON object"},
		{"hooks not an object", `{"hooks": []}`, "hooks is not an object"},
		{"PostToolUse not an array", `{"hooks": {"PostToolUse": {}}}`, "hooks.PostToolUse is not an array"},
		{"allow not an array", `{"permissions": {"allow": "x"}}`, "permissions.allow is not an array"},
		{"duplicate key", `{"hooks": {}, "hooks": {}}`, `names the key "hooks" twice`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "settings.json")
			write(t, p, c.text)
			st, _ := os.Stat(p)
			_, err := Install(InstallOptions{Hooks: p, Allow: p, Command: cmdA})
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) {
				t.Errorf("error %v, want %q naming the file", err, c.want)
			}
			if st2, _ := os.Stat(p); read(t, p) != c.text || !st2.ModTime().Equal(st.ModTime()) {
				t.Error("the file was touched")
			}
			if m, _ := filepath.Glob(p + "*"); len(m) != 1 {
				t.Errorf("files left: %v", m)
			}
		})
	}
	// A refused second file leaves the first one untouched too.
	tmp := t.TempDir()
	proj, user := filepath.Join(tmp, "proj.json"), filepath.Join(tmp, "user.json")
	write(t, proj, original)
	write(t, user, "{oops")
	if _, err := Install(InstallOptions{Hooks: proj, Allow: user, Command: cmdA}); err == nil {
		t.Error("no error")
	}
	if read(t, proj) != original {
		t.Error("the project file changed although the user file was refused")
	}
}

func TestInstallDryRun(t *testing.T) {
	p := filepath.Join(t.TempDir(), "settings.json")
	write(t, p, original)
	ch, err := Install(InstallOptions{Hooks: p, Allow: p, Command: cmdA, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	d := string(ch[0].Diff)
	for _, want := range []string{"+        \"matcher\": \"" + Matcher + "\",", "+        \"matcher\": \"" + PreMatcher + "\",", "+            \"command\": \"" + cmdA + "\"", "+      \"Bash(retval peek:*)\","} {
		if !strings.Contains(d, want) {
			t.Errorf("diff lacks %q:\n%s", want, d)
		}
	}
	if read(t, p) != original || ch[0].Backup != "" {
		t.Error("a dry run wrote")
	}
	if m, _ := filepath.Glob(p + "*"); len(m) != 1 {
		t.Errorf("files: %v", m)
	}
}

// A symlinked settings file (a dotfile manager's) stays a symlink: the
// file it points at is edited.
func TestInstallSymlink(t *testing.T) {
	tmp := t.TempDir()
	target := filepath.Join(tmp, "dotfiles", "settings.json")
	write(t, target, original)
	link := filepath.Join(tmp, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(InstallOptions{Hooks: link, Command: cmdA}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the symlink was replaced")
	}
	if retvalHooks(decodeSettings(t, target), cmdA) != 1 {
		t.Error("the target was not edited")
	}
}

// Other formatting: the indent is kept; the file is rewritten in that
// style.
func TestInstallKeepsIndent(t *testing.T) {
	p := filepath.Join(t.TempDir(), "settings.json")
	orig := "{\n    \"model\": \"opus\"\n}"
	write(t, p, orig)
	Install(InstallOptions{Hooks: p, Command: cmdA})
	if got := read(t, p); !strings.HasPrefix(got, "{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"PostToolUse\": [") {
		t.Errorf("got\n%s", got)
	}
	Uninstall(UninstallOptions{Hooks: p, Command: cmdA})
	if got := read(t, p); got != orig {
		t.Errorf("after uninstall %q, want %q", got, orig)
	}
}

// When the user's file cannot be written after the project's was, the
// error names what was already written and its backup, and says that
// running the command again finishes the job — which it does.
func TestInstallSecondWriteFails(t *testing.T) {
	tmp := t.TempDir()
	proj := filepath.Join(tmp, "proj", ".claude", "settings.json")
	write(t, proj, original)
	home := filepath.Join(tmp, "home")
	os.MkdirAll(home, 0o755)
	user := filepath.Join(testenv.MountReadOnly(t, home), "settings.json")
	_, err := Install(InstallOptions{Hooks: proj, Allow: user, Command: cmdA})
	want := "; " + proj + " (backup " + proj + BackupSuffix + ") was already written: fix the cause and run the same command again to finish"
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("install onto a read-only user file: %v\nwant it to end %q", err, want)
	}
	if retvalHooks(decodeSettings(t, proj), cmdA) != 1 {
		t.Fatal("the project's file was not written before the failure")
	}
	ch, err := Install(InstallOptions{Hooks: proj, Allow: filepath.Join(home, "settings.json"), Command: cmdA})
	if err != nil || ch[0].Changed || !ch[1].Changed {
		t.Fatalf("running again: %+v, %v; want only the user's file changed", ch, err)
	}
}

// Allow entries the user had before install are the user's: install
// says it added only the missing one, and uninstall removes only that.
func TestUninstallKeepsUsersAllowEntries(t *testing.T) {
	p := filepath.Join(t.TempDir(), "settings.json")
	orig := "{\n  \"permissions\": {\n    \"allow\": [\n      \"Bash(retval peek:*)\"\n    ]\n  }\n}\n"
	write(t, p, orig)
	ch, err := Install(InstallOptions{Hooks: p, Allow: p, Command: cmdA})
	if err != nil || !ch[0].Allow {
		t.Fatalf("install: %+v %v", ch, err)
	}
	if got := decodeSettings(t, p).Permissions.Allow; strings.Join(got, ",") != "Bash(retval peek:*),Bash(retval resolve:*)" {
		t.Errorf("allow after install: %v", got)
	}
	if _, err := Uninstall(UninstallOptions{Hooks: p, Allow: p}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, p); got != orig {
		t.Errorf("after uninstall:\n%s\nwant\n%s", got, orig)
	}
	if _, err := os.Stat(p + NoteSuffix); !os.IsNotExist(err) {
		t.Errorf("the note is still there: %v", err)
	}
}

// An install into a home or a project with no settings file, then an
// uninstall, leaves nothing behind: no file, no backup, no note, no
// directory install made.
func TestInstallUninstallLeavesNothing(t *testing.T) {
	tmp := t.TempDir()
	home, proj := filepath.Join(tmp, "home"), filepath.Join(tmp, "proj")
	os.MkdirAll(home, 0o755)
	os.MkdirAll(proj, 0o755)
	user := filepath.Join(home, ".claude", "settings.json")
	project := filepath.Join(proj, ".claude", "settings.json")
	empty := func(dir string) {
		t.Helper()
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			var names []string
			filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { names = append(names, p); return nil })
			t.Errorf("left behind in %s: %v", dir, names)
		}
	}
	// --user twice (the second changes nothing), then out.
	for range 2 {
		if _, err := Install(InstallOptions{Hooks: user, Allow: user, Command: cmdA}); err != nil {
			t.Fatal(err)
		}
	}
	if ch, err := Uninstall(UninstallOptions{Hooks: user, Allow: user}); err != nil || !ch[0].Deleted || ch[0].Backup != "" {
		t.Fatalf("uninstall --user: %+v %v", ch, err)
	}
	empty(home)
	// --project: the hook in the project, the allow entries in the user's
	// file; uninstall --project, then uninstall --user.
	if _, err := Install(InstallOptions{Hooks: project, Allow: user, Command: cmdA}); err != nil {
		t.Fatal(err)
	}
	if _, err := Uninstall(UninstallOptions{Hooks: project}); err != nil {
		t.Fatal(err)
	}
	empty(proj)
	if _, err := Uninstall(UninstallOptions{Hooks: user, Allow: user}); err != nil {
		t.Fatal(err)
	}
	empty(home)
	// A file that held only white space gets it back.
	write(t, user, "\n\n")
	Install(InstallOptions{Hooks: user, Allow: user, Command: cmdA})
	Uninstall(UninstallOptions{Hooks: user, Allow: user})
	if got := read(t, user); got != "\n\n" {
		t.Errorf("a blank file became %q", got)
	}
}

// install + uninstall is byte for byte, whatever the file's layout:
// compact on one line, CRLF line endings, tabs; and install writes its
// entries in that layout.
func TestInstallRoundTripLayouts(t *testing.T) {
	for _, c := range []struct{ name, orig, installed string }{
		{"compact", `{"model":"opus","permissions":{"allow":["Bash(npm test:*)"]}}`,
			`{"model":"opus","permissions":{"allow":["Bash(npm test:*)","Bash(retval peek:*)","Bash(retval resolve:*)"]},"hooks":{"PostToolUse":[{"matcher":"Bash|mcp__.*|Write|Edit|MultiEdit|NotebookEdit","hooks":[{"type":"command","command":"/usr/local/bin/retval hook claude-code"}]}],"PreToolUse":[{"matcher":"Write|Edit|MultiEdit|NotebookEdit|Bash|mcp__.*","hooks":[{"type":"command","command":"/usr/local/bin/retval hook claude-code"}]}],"SessionStart":[{"hooks":[{"type":"command","command":"/usr/local/bin/retval hook claude-code"}]}]}}`},
		{"crlf", strings.ReplaceAll(original, "\n", "\r\n"), ""},
		{"tabs", strings.ReplaceAll(original, "  ", "\t"), ""},
		{"one line with spaces", `{"model": "opus", "hooks": {"Stop": []}}` + "\n", ""},
		{"empty object", "{}", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "settings.json")
			write(t, p, c.orig)
			if _, err := Install(InstallOptions{Hooks: p, Allow: p, Command: cmdA}); err != nil {
				t.Fatal(err)
			}
			got := read(t, p)
			if c.installed != "" && got != c.installed {
				t.Errorf("installed:\n%s\nwant\n%s", got, c.installed)
			}
			if strings.Contains(c.orig, "\r\n") && strings.Count(got, "\n") != strings.Count(got, "\r\n") {
				t.Errorf("a bare LF in a CRLF file:\n%q", got)
			}
			if s := decodeSettings(t, p); retvalHooks(s, cmdA) != 1 || len(s.Permissions.Allow) < 2 {
				t.Errorf("installed: %+v", s)
			}
			if _, err := Uninstall(UninstallOptions{Hooks: p, Allow: p}); err != nil {
				t.Fatal(err)
			}
			if got := read(t, p); got != c.orig {
				t.Errorf("after uninstall:\n%q\nwant\n%q", got, c.orig)
			}
		})
	}
}

// A settings file that is a symlink to a file not made yet (a dotfile
// manager's): install creates the target, the link stays a link, and
// uninstall takes the target away again.
func TestInstallDanglingSymlink(t *testing.T) {
	tmp := t.TempDir()
	dot := filepath.Join(tmp, "dotfiles")
	os.MkdirAll(dot, 0o755)
	link := filepath.Join(tmp, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink(filepath.Join(dot, "claude.json"), link); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(InstallOptions{Hooks: link, Allow: link, Command: cmdA}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v %v", fi, err)
	}
	if retvalHooks(decodeSettings(t, filepath.Join(dot, "claude.json")), cmdA) != 1 {
		t.Error("the target was not written")
	}
	if _, err := Uninstall(UninstallOptions{Hooks: link, Allow: link}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("uninstall took the symlink: %v %v", fi, err)
	}
	if ents, _ := os.ReadDir(dot); len(ents) != 0 {
		t.Errorf("left in the dotfiles: %v", ents)
	}
	// A link into a directory that does not exist is refused, saying why.
	nowhere := filepath.Join(tmp, "nowhere.json")
	os.Symlink(filepath.Join(tmp, "gone", "x.json"), nowhere)
	if _, err := Install(InstallOptions{Hooks: nowhere, Command: cmdA}); err == nil || !strings.Contains(err.Error(), "whose directory does not exist") {
		t.Errorf("install through a link into nowhere: %v", err)
	}
	if _, err := os.Stat(filepath.Join(tmp, "gone")); err == nil {
		t.Error("install made the link's directory")
	}
}

// retval's own entry, written by hand with arguments, is recognised:
// install adds no second hook, and uninstall keeps it (it was there
// before install); install + uninstall leaves the file as it was.
func TestInstallRecognisesRetvalEntry(t *testing.T) {
	for _, own := range []string{
		"retval hook claude-code --threshold 50KiB",
		"'/opt/my tools/retval' hook claude-code --off",
		"RETVAL_THRESHOLD=50KiB /usr/bin/retval hook claude-code",
		"C:/Users/me/go/bin/retval.exe hook claude-code --off",
	} {
		p := filepath.Join(t.TempDir(), "settings.json")
		orig := `{"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": ` + jsonQuote(own) + `}]}]}}`
		write(t, p, orig)
		ch, err := Install(InstallOptions{Hooks: p, Allow: p, Command: cmdA})
		if err != nil || ch[0].Own != own {
			t.Fatalf("%s: install %+v %v", own, ch, err)
		}
		if s := decodeSettings(t, p); len(s.Hooks.PostToolUse) != 1 {
			t.Errorf("%s: a second hook: %+v", own, s.Hooks)
		}
		ch, err = Uninstall(UninstallOptions{Hooks: p, Allow: p})
		if err != nil || ch[0].Own != own {
			t.Fatalf("%s: uninstall %+v %v", own, ch, err)
		}
		if got := read(t, p); got != orig {
			t.Errorf("%s: after uninstall:\n%s", own, got)
		}
	}
	for _, other := range []string{"retval hook claude-code install --user", "notretval hook claude-code", "retval.exe.old hook claude-code", "retval hook gemini-cli", "echo 'retval hook claude-code"} {
		if isRetvalHook(other, "claude-code", false) {
			t.Errorf("%q taken for retval's hook", other)
		}
	}
}

// The hook's command names the binary with forward slashes, which Git
// Bash (where Claude Code runs hooks on Windows) takes as they are: a
// backslash there is an escape.
func TestCommandWritesForwardSlashes(t *testing.T) {
	exe := filepath.Join("my tools", "bin", "retval.exe")
	if got, want := ClaudeCodeSettings.Command(exe), "'my tools/bin/retval.exe' hook claude-code"; got != want {
		t.Errorf("Command(%q) = %s, want %s", exe, got, want)
	}
	if !isRetvalHook(ClaudeCodeSettings.Command(exe), "claude-code", true) {
		t.Errorf("%s is not taken for retval's hook", ClaudeCodeSettings.Command(exe))
	}
}

// A file installed by an older retval has no note: uninstall removes the
// hook, and keeps the allow entries (it cannot tell them from the
// user's), saying so.
func TestUninstallWithoutNote(t *testing.T) {
	p := filepath.Join(t.TempDir(), "settings.json")
	write(t, p, `{"permissions": {"allow": ["Bash(retval peek:*)", "Bash(retval resolve:*)"]}, "hooks": {"PostToolUse": [{"matcher": "Bash|mcp__.*", "hooks": [{"type": "command", "command": "/old/retval hook claude-code"}]}]}}`)
	ch, err := Uninstall(UninstallOptions{Hooks: p, Allow: p})
	if err != nil || !ch[0].Hook || ch[0].Allow || len(ch[0].KeptAllow) != 2 {
		t.Fatalf("%+v %v", ch, err)
	}
	if got := read(t, p); got != `{"permissions": {"allow": ["Bash(retval peek:*)", "Bash(retval resolve:*)"]}}` {
		t.Errorf("got %s", got)
	}
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// A note left beside a settings file the user has since deleted says
// nothing of the file install makes next: that install starts afresh, so
// the uninstall after it removes the file again.
func TestStaleNote(t *testing.T) {
	p := filepath.Join(t.TempDir(), "settings.json")
	write(t, p, original)
	Install(InstallOptions{Hooks: p, Allow: p, Command: cmdA})
	os.Remove(p)
	if _, err := Install(InstallOptions{Hooks: p, Allow: p, Command: cmdA}); err != nil {
		t.Fatal(err)
	}
	if ch, err := Uninstall(UninstallOptions{Hooks: p, Allow: p}); err != nil || !ch[0].Deleted {
		t.Fatalf("%+v %v", ch, err)
	}
	if m, _ := filepath.Glob(p + "*"); len(m) != 0 {
		t.Errorf("left: %v", m)
	}
}
