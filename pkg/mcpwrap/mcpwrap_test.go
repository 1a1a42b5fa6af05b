package mcpwrap

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const exe = "/opt/bin/retval"

func write(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o640); err != nil {
		t.Fatal(err)
	}
	return p
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type wrapCase struct {
	name   string
	server string
	in     string
	want   string // the file after Wrap
	// unwrapped is the file after Wrap then Unwrap when it is not in
	// (an empty args array is removed).
	unwrapped string
}

var codexCases = []wrapCase{{
	name: "simple",
	in: `model = "o3"

[mcp_servers.fs]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
env = { "API_KEY" = "x" }
startup_timeout_sec = 20
`,
	want: `model = "o3"

[mcp_servers.fs]
command = "/opt/bin/retval"
args = ["mcp", "proxy", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "."]
env = { "API_KEY" = "x" }
startup_timeout_sec = 20
`,
}, {
	name: "quoted keys, literal strings, comments, blank lines and odd spacing",
	in: `# my config
[ mcp_servers . "my server" ]   # the one I use
  # what it runs
  command='C:\tools\srv.exe'  # a literal string
  "args" = [ 'a' ,"b\"c" ]


[mcp_servers.'git']
args = []
command = "uvx"
cwd = "/src"
[mcp_servers.git.env]
TOKEN = "t"
`,
	want: `# my config
[ mcp_servers . "my server" ]   # the one I use
  # what it runs
  command="/opt/bin/retval"  # a literal string
  "args" = [ "mcp" ,"proxy" ,"--" ,'C:\tools\srv.exe' ,'a' ,"b\"c" ]


[mcp_servers.'git']
args = ["mcp", "proxy", "--", "uvx"]
command = "/opt/bin/retval"
cwd = "/src"
[mcp_servers.git.env]
TOKEN = "t"
`,
}, {
	name: "no args, CRLF, last line without a break",
	in:   "[mcp_servers.a]\r\ncommand = \"srv\" # c\r\n[mcp_servers.b]\r\n  command = \"x\"",
	want: "[mcp_servers.a]\r\ncommand = \"/opt/bin/retval\" # c\r\nargs = [\"mcp\", \"proxy\", \"--\", \"srv\"]\r\n[mcp_servers.b]\r\n  command = \"/opt/bin/retval\"\n  args = [\"mcp\", \"proxy\", \"--\", \"x\"]",
}, {
	name: "already wrapped, remote and tricky strings elsewhere are left alone",
	in: `notes = """
[mcp_servers.fake]
command = "no"
"""
when = 1979-05-27 07:32:00Z
list = [
  [1, 2], # [mcp_servers.nope]
  { a = "]" },
]

[mcp_servers.done]
command = "/usr/local/bin/retval"
args = ["mcp", "proxy", "--run", "r1", "--", "srv"]

[mcp_servers.web]
url = "https://example.com/mcp"
bearer_token_env_var = "TOKEN"

[mcp_servers.new]
command = "srv2"
args = ["--flag"]
`,
	want: `notes = """
[mcp_servers.fake]
command = "no"
"""
when = 1979-05-27 07:32:00Z
list = [
  [1, 2], # [mcp_servers.nope]
  { a = "]" },
]

[mcp_servers.done]
command = "/usr/local/bin/retval"
args = ["mcp", "proxy", "--run", "r1", "--", "srv"]

[mcp_servers.web]
url = "https://example.com/mcp"
bearer_token_env_var = "TOKEN"

[mcp_servers.new]
command = "/opt/bin/retval"
args = ["mcp", "proxy", "--", "srv2", "--flag"]
`,
	// Unwrap unwraps every wrapped entry, those wrapped by hand too.
	unwrapped: `notes = """
[mcp_servers.fake]
command = "no"
"""
when = 1979-05-27 07:32:00Z
list = [
  [1, 2], # [mcp_servers.nope]
  { a = "]" },
]

[mcp_servers.done]
command = "srv"

[mcp_servers.web]
url = "https://example.com/mcp"
bearer_token_env_var = "TOKEN"

[mcp_servers.new]
command = "srv2"
args = ["--flag"]
`,
}, {
	name:   "one server named",
	server: "b",
	in: `[mcp_servers.a]
command = "a"
[mcp_servers.b]
command = "b"
args = ["1"]
`,
	want: `[mcp_servers.a]
command = "a"
[mcp_servers.b]
command = "/opt/bin/retval"
args = ["mcp", "proxy", "--", "b", "1"]
`,
}, {
	name: "an empty args written as Wrap adds one is dropped on unwrap",
	in: `[mcp_servers.a]
command = "a"
args = []
`,
	want: `[mcp_servers.a]
command = "/opt/bin/retval"
args = ["mcp", "proxy", "--", "a"]
`,
	unwrapped: `[mcp_servers.a]
command = "a"
`,
}, {
	name: "an empty args written otherwise stays",
	in: `[mcp_servers.a]
command = "a"
"args"=[ ]
`,
	want: `[mcp_servers.a]
command = "/opt/bin/retval"
"args"=[ "mcp", "proxy", "--", "a"]
`,
}, {
	name: "dates, numbers, nested tables and arrays of tables elsewhere decode the same before and after",
	in: `started = 1979-05-27T07:32:00.999-07:00
day = 1979-05-27
at = 07:32:00
local = 1979-05-27T07:32:00
ratio = 1.5e3
big = 0x7FFF_FFFF_FFFF_FFFF
on = true
point = { x = 1, y = [2.5, -inf] }

[[profiles]]
name = "a"
[[profiles]]
name = "b"
[profiles.env]
since = 2024-02-29

[mcp_servers.a]
command = "srv"
args = ["--since", "2024"]
startup_timeout_sec = 20
tool_timeout_sec = 60.5
[mcp_servers.a.env]
WHEN = 2024-02-29T00:00:00Z
`,
	want: `started = 1979-05-27T07:32:00.999-07:00
day = 1979-05-27
at = 07:32:00
local = 1979-05-27T07:32:00
ratio = 1.5e3
big = 0x7FFF_FFFF_FFFF_FFFF
on = true
point = { x = 1, y = [2.5, -inf] }

[[profiles]]
name = "a"
[[profiles]]
name = "b"
[profiles.env]
since = 2024-02-29

[mcp_servers.a]
command = "/opt/bin/retval"
args = ["mcp", "proxy", "--", "srv", "--since", "2024"]
startup_timeout_sec = 20
tool_timeout_sec = 60.5
[mcp_servers.a.env]
WHEN = 2024-02-29T00:00:00Z
`,
}}

var claudeCases = []wrapCase{{
	name: "as Claude Code writes it",
	in: `{
  "mcpServers": {
    "fs": {
      "type": "stdio",
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-filesystem"
      ],
      "env": {}
    },
    "web": {
      "type": "http",
      "url": "https://example.com/mcp"
    }
  }
}
`,
	want: `{
  "mcpServers": {
    "fs": {
      "type": "stdio",
      "command": "/opt/bin/retval",
      "args": [
        "mcp",
        "proxy",
        "--",
        "npx",
        "-y",
        "@modelcontextprotocol/server-filesystem"
      ],
      "env": {}
    },
    "web": {
      "type": "http",
      "url": "https://example.com/mcp"
    }
  }
}
`,
}, {
	name: "hand-written on few lines, escapes kept",
	in: `{"other": 1.50, "mcpServers": {"a": {"command": "\u0073rv", "args": ["x"]},
  "b": {"command": "b"}, "c": { "args": [ ], "command" : "c" }}}`,
	want: `{"other": 1.50, "mcpServers": {"a": {"command": "/opt/bin/retval", "args": ["mcp", "proxy", "--", "\u0073rv", "x"]},
  "b": {"command": "/opt/bin/retval", "args": ["mcp", "proxy", "--", "b"]}, "c": { "args": [ "mcp", "proxy", "--", "c"], "command" : "/opt/bin/retval" }}}`,
	// An args array Wrap added stays, empty, as Claude Code writes one.
	unwrapped: `{"other": 1.50, "mcpServers": {"a": {"command": "\u0073rv", "args": ["x"]},
  "b": {"command": "b", "args": []}, "c": { "args": [ ], "command" : "c" }}}`,
}, {
	name: "one member on its own line",
	in: `{
  "mcpServers": {
    "a": {
      "command": "a"
    }
  }
}`,
	want: `{
  "mcpServers": {
    "a": {
      "command": "/opt/bin/retval",
      "args": ["mcp", "proxy", "--", "a"]
    }
  }
}`,
	unwrapped: `{
  "mcpServers": {
    "a": {
      "command": "a",
      "args": []
    }
  }
}`,
}}

// claudeJSON is ~/.claude.json as Claude Code writes it: user-scope
// servers at the top, local-scope ones under their project.
const claudeJSON = `{
  "numStartups": 3,
  "mcpServers": {
    "fs": {
      "type": "stdio",
      "command": "npx",
      "args": [
        "-y",
        "y"
      ],
      "env": {}
    }
  },
  "projects": {
    "/src/a": {
      "allowedTools": [],
      "mcpServers": {
        "fs": {
          "type": "stdio",
          "command": "npx",
          "args": [
            "-y",
            "x"
          ],
          "env": {}
        },
        "git": {
          "type": "stdio",
          "command": "uvx",
          "args": [],
          "env": {}
        }
      }
    },
    "/src/b": {
      "allowedTools": []
    }
  }
}
`

// --server picks the entries of that name in every scope of ~/.claude.json.
func TestClaudeProjects(t *testing.T) {
	p := write(t, ".claude.json", claudeJSON)
	o := Options{Format: ClaudeCode, Path: p, Server: "fs", Command: exe}
	res, err := Wrap(o)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range res.Entries {
		got = append(got, e.Project+" "+e.Name+": "+string(e.Action)+": "+strings.Join(e.Command, " "))
	}
	if want := " fs: wrapped: npx -y y\n/src/a fs: wrapped: npx -y x"; strings.Join(got, "\n") != want {
		t.Errorf("entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
	now := read(t, p)
	if strings.Count(now, `"command": "/opt/bin/retval"`) != 2 || !strings.Contains(now, `"command": "uvx"`) {
		t.Errorf("wrapped:\n%s", now)
	}
	o.Server = ""
	res, err = Wrap(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Entries) != 3 || res.Entries[2].Name != "git" || res.Entries[2].Action != Wrapped {
		t.Errorf("entries %+v", res.Entries)
	}
	if _, err := Unwrap(o); err != nil {
		t.Fatal(err)
	}
	if got := read(t, p); got != claudeJSON {
		t.Errorf("unwrapped:\n%s", got)
	}
	o.Server = "nope"
	if _, err := Wrap(o); err == nil || !strings.HasSuffix(err.Error(), `has no server "nope": it has fs, git`) {
		t.Errorf("error %v", err)
	}
}

func TestWrapUnwrap(t *testing.T) {
	for _, f := range []struct {
		format Format
		name   string
		cases  []wrapCase
	}{{Codex, "config.toml", codexCases}, {ClaudeCode, ".mcp.json", claudeCases}} {
		for _, c := range f.cases {
			t.Run(f.format.String()+"/"+c.name, func(t *testing.T) {
				p := write(t, f.name, c.in)
				o := Options{Format: f.format, Path: p, Server: c.server, Command: exe}
				res, err := Wrap(o)
				if err != nil {
					t.Fatal(err)
				}
				if got := read(t, p); got != c.want {
					t.Fatalf("wrapped:\n%s\nwant:\n%s", got, c.want)
				}
				if !res.Changed || res.Backup != p+BackupSuffix || read(t, res.Backup) != c.in {
					t.Errorf("changed %v, backup %q holding the file as it was", res.Changed, res.Backup)
				}
				again, err := Wrap(o)
				if err != nil {
					t.Fatal(err)
				}
				if again.Changed || read(t, p) != c.want {
					t.Errorf("wrapping twice changed the file")
				}
				for _, e := range again.Entries {
					if e.Action == Wrapped {
						t.Errorf("%s wrapped twice", e.Name)
					}
				}
				if _, err := Unwrap(o); err != nil {
					t.Fatal(err)
				}
				want := c.in
				if c.unwrapped != "" {
					want = c.unwrapped
				}
				if got := read(t, p); got != want {
					t.Fatalf("unwrapped:\n%s\nwant:\n%s", got, want)
				}
				if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
					t.Errorf("mode %v, want 0640 kept", fi.Mode().Perm())
				}
			})
		}
	}
}

func TestEntries(t *testing.T) {
	p := write(t, "config.toml", codexCases[3].in)
	res, err := Wrap(Options{Format: Codex, Path: p, Command: exe, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range res.Entries {
		got = append(got, e.Name+": "+string(e.Action)+": "+strings.Join(e.Command, " "))
	}
	want := []string{
		"done: already_wrapped: srv",
		"web: remote: https://example.com/mcp",
		"new: wrapped: srv2 --flag",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if read(t, p) != codexCases[3].in {
		t.Error("a dry run wrote the file")
	}
	if _, err := os.Stat(p + BackupSuffix); err == nil {
		t.Error("a dry run wrote a backup")
	}
	if !res.Changed || !strings.Contains(string(res.Diff), "\n+args = [\"mcp\", \"proxy\", \"--\", \"srv2\", \"--flag\"]\n") {
		t.Errorf("diff:\n%s", res.Diff)
	}
}

func TestRefused(t *testing.T) {
	for _, c := range []struct {
		format     Format
		server, in string
		err        string
	}{
		{Codex, "", "[mcp_servers.a]\ncommand = \"a\"\nargs = [\n  \"x\",\n]\n", `[mcp_servers.a]: args spans several lines: write it on one line, then run this again`},
		{Codex, "", "[mcp_servers.a]\ncommand = \"\"\"a\"\"\"\n", `[mcp_servers.a]: command is a multi-line string: write it as command = "PROGRAM" on one line, then run this again`},
		{Codex, "", "mcp_servers = { a = { command = \"a\" } }\n", `[mcp_servers.a]: is written as an inline table or with dotted keys: write it as its own [mcp_servers.a] table with command = "..." and args = [...] lines, then run this again`},
		{Codex, "", "[mcp_servers]\nb.command = \"b\"\n", `[mcp_servers.b]: is written as an inline table`},
		{Codex, "", "[mcp_servers.a]\ncommand = \"a\"\nargs = [\"x\", 1]\n", `[mcp_servers.a]: args holds something other than strings`},
		{Codex, "", "[mcp_servers.a]\nargs = [\"x\"]\n", `[mcp_servers.a] has neither command nor url: fix it by hand`},
		{Codex, "", "[mcp_servers.a\ncommand = 1\n", `is not valid TOML: `},
		{Codex, "", "model = \"o3\"\n[mcp_servers.a\ncommand = 1\n", `is not valid TOML: toml: line 2, column 15: expected ']' to close table name; it is left as it is: fix it, then run this again`},
		{Codex, "zz", "[mcp_servers.a]\ncommand = \"a\"\n[mcp_servers.b]\ncommand = \"b\"\n", `has no server "zz": it has a, b`},
		{Codex, "web", "[mcp_servers.web]\nurl = \"https://x\"\n", `[mcp_servers.web] is a remote server (url https://x): only a server started as a command is wrapped; relay this one with retval mcp proxy --url by hand`},
		{ClaudeCode, "", `{"mcpServers": {"a": {"command": "a", "args": "x"}}}`, `mcpServers.a: args is not an array`},
		{ClaudeCode, "", `{"mcpServers": {"a": {"command": ["a"]}}}`, `mcpServers.a: command is not a string`},
		{ClaudeCode, "", `{"mcpServers": [1]}`, `mcpServers is not an object`},
		{ClaudeCode, "", `{"mcpServers": {"a": {"command": "a"},}}`, `is not valid JSON: `},
		{ClaudeCode, "", `{"mcpServers": {"a": {"command": "a", "command": "b"}}}`, `the key "command" occurs twice in one object`},
		{ClaudeCode, "", `[]`, `not a JSON object`},
	} {
		p := write(t, "f", c.in)
		_, err := Wrap(Options{Format: c.format, Path: p, Server: c.server, Command: exe})
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: error %v, want one containing %q", c.in, err, c.err)
		}
		if read(t, p) != c.in {
			t.Errorf("%q: a refused file was changed", c.in)
		}
		if _, err := os.Stat(p + BackupSuffix); err == nil {
			t.Errorf("%q: a refused file got a backup", c.in)
		}
	}
}

// A symlinked file is edited where it points; the link stays.
func TestSymlink(t *testing.T) {
	target := write(t, "real.toml", codexCases[0].in)
	link := filepath.Join(t.TempDir(), "config.toml")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Wrap(Options{Format: Codex, Path: link, Command: exe}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link is no longer a link: %v", err)
	}
	if read(t, target) != codexCases[0].want {
		t.Errorf("the target was not wrapped")
	}
	if read(t, target+BackupSuffix) != codexCases[0].in {
		t.Errorf("no backup beside the target")
	}
}

func TestMissingFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.toml")
	_, err := Wrap(Options{Format: Codex, Path: p, Command: exe})
	if err == nil || err.Error() != p+" does not exist: nothing to do" {
		t.Errorf("error %v", err)
	}
	if _, err := os.Stat(p); err == nil {
		t.Error("a missing file was created")
	}
}

// misread finds the command of [mcp_servers.a] on the wrong line, as a
// scanner with a bug would: the check of the decoded file must refuse
// the edit.
type misread struct{ codexFormat }

func (m misread) servers(src string, doc any) ([]*server, error) {
	out, err := m.codexFormat.servers(src, doc)
	if err == nil {
		i := strings.Index(src, `"o3"`)
		out[0].cmd.start, out[0].cmd.end = i, i+4
	}
	return out, err
}

func TestDecodedCheck(t *testing.T) {
	formats[99] = misread{}
	defer delete(formats, 99)
	in := "model = \"o3\"\n[mcp_servers.a]\ncommand = \"a\"\n"
	p := write(t, "config.toml", in)
	_, err := Wrap(Options{Format: 99, Path: p, Command: exe})
	if err == nil || !strings.Contains(err.Error(), "the edit would change more than command and args; it is left as it is: change it by hand") {
		t.Errorf("error %v", err)
	}
	if read(t, p) != in {
		t.Error("the file was changed")
	}
}

// Whatever a file holds, Wrap refuses it or wraps it so that Unwrap
// gives it back, and neither panics.
func FuzzRoundTrip(f *testing.F) {
	for _, c := range codexCases {
		f.Add(false, c.in)
	}
	for _, c := range claudeCases {
		f.Add(true, c.in)
	}
	f.Fuzz(func(t *testing.T, json bool, in string) {
		format, name := Codex, "config.toml"
		if json {
			format, name = ClaudeCode, ".mcp.json"
		}
		p := write(t, name, in)
		o := Options{Format: format, Path: p, Command: exe}
		res, err := Wrap(o)
		if err != nil || !res.Changed {
			if read(t, p) != in {
				t.Fatal("a refused or unchanged file was changed")
			}
			return
		}
		for _, e := range res.Entries {
			if e.Action == AlreadyWrapped {
				return // unwrap also unwraps those
			}
		}
		if _, err := Unwrap(o); err != nil {
			t.Fatalf("unwrap after wrap: %v", err)
		}
		if got := read(t, p); got != in && !strings.Contains(in, "[]") && !strings.Contains(got, "[]") {
			t.Fatalf("round trip:\n%q\ngave\n%q", in, got)
		}
	})
}
