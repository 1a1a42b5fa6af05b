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
		PostToolUse []struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type, Command string
			} `json:"hooks"`
		} `json:"PostToolUse"`
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

// retvalHooks counts the groups running cmd.
func retvalHooks(s settingsOf, cmd string) int {
	n := 0
	for _, g := range s.Hooks.PostToolUse {
		for _, h := range g.Hooks {
			if h.Command == cmd && h.Type == "command" && g.Matcher == Matcher {
				n++
			}
		}
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
        "matcher": "Bash|mcp__.*",
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
	// A retval binary at another path is the same hook: uninstall finds it.
	if ch, err := Uninstall(UninstallOptions{Hooks: p, Command: cmdA}); err != nil || !ch[0].Changed {
		t.Fatalf("%+v %v", ch, err)
	}
	if got := read(t, p); got != "{}\n" {
		t.Errorf("after uninstall: %q", got)
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
	want := "{\n  \"hooks\": {\n    \"PostToolUse\": [\n      {\n        \"matcher\": \"Bash|mcp__.*\",\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"logger\"\n          }\n        ]\n      }\n    ]\n  }\n}"
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
		{"duplicate key", `{"hooks": {}, "hooks": {}}`, `the key "hooks" occurs twice`},
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
	for _, want := range []string{"+        \"matcher\": \"Bash|mcp__.*\",", "+            \"command\": \"" + cmdA + "\"", "+      \"Bash(retval peek:*)\","} {
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
