package cmd

import (
	"bytes"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"unicode"
)

// refusingStdin is a stdin that no command asked for its help may read.
type refusingStdin struct{ reads atomic.Int32 }

func (r *refusingStdin) Read([]byte) (int, error) {
	r.reads.Add(1)
	return 0, errors.New("stdin read while showing help")
}

// usagePaths lists the command words of every usage line of every
// command ("hook claude-code install", "mcp proxy"): the words after
// "retval" up to the first flag, placeholder or bracket. A command or
// verb added later is covered as soon as its usage line names it.
func usagePaths(t *testing.T) [][]string {
	t.Helper()
	var paths [][]string
	seen := map[string]bool{}
	for _, rc := range commands {
		c := rc.build()
		for _, line := range strings.Split(c.UsageText, "\n") {
			words := strings.Fields(line)
			if len(words) < 2 || words[0] != "retval" || words[1] != c.Name {
				continue
			}
			path := []string{c.Name}
			for _, w := range words[2:] {
				if !isCommandWord(w) {
					break
				}
				path = append(path, w)
			}
			if k := strings.Join(path, " "); !seen[k] {
				seen[k] = true
				paths = append(paths, path)
			}
		}
		if !seen[c.Name] {
			seen[c.Name] = true
			paths = append(paths, []string{c.Name})
		}
	}
	return paths
}

// isCommandWord reports whether w reads as a verb in a usage line: lower
// case letters and dashes ("claude-code", "install"), not a flag, a
// placeholder (ID, FILE) or an alternative ("[…]", "(…", "a|b").
func isCommandWord(w string) bool {
	if w == "" || w[0] == '-' {
		return false
	}
	for _, r := range w {
		if !unicode.IsLower(r) && r != '-' {
			return false
		}
	}
	return true
}

// TestHelpEveryCommand: every command and every verb its usage names
// answers --help and -h with its help, exit 0, without reading stdin,
// starting a server or complaining about what it was not given
// ("retval mcp serve --help" started the server; "retval hook
// claude-code --help" read the hook input from stdin).
func TestHelpEveryCommand(t *testing.T) {
	t.Setenv("RETVAL_RUNS_DIR", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	for _, k := range []string{"RETVAL_RUN", "RETVAL_JSON", "RETVAL_CONFIG", "RETVAL_STORE"} {
		t.Setenv(k, "")
	}
	paths := usagePaths(t)
	var nested int
	for _, p := range paths {
		if len(p) > 1 {
			nested++
		}
	}
	if nested < 6 { // hook claude-code [install|uninstall], mcp proxy|serve|wrap|unwrap
		t.Fatalf("found %d verbs in the usage lines, want at least 6: %q", nested, paths)
	}
	for _, p := range paths {
		for _, flag := range []string{"--help", "-h"} {
			args := append(append([]string{"retval"}, p...), flag)
			t.Run(strings.Join(args[1:], " "), func(t *testing.T) {
				in := &refusingStdin{}
				var out, errb bytes.Buffer
				code := Main(args, in, &out, &errb)
				if code != 0 || errb.Len() > 0 {
					t.Fatalf("exit %d, stderr %q; want 0 and nothing", code, errb.String())
				}
				if want := "NAME:\n   retval " + p[0] + " - "; !strings.HasPrefix(out.String(), want) {
					t.Fatalf("stdout starts %q, want the help of %q", firstLine(out.String()), p[0])
				}
				if n := in.reads.Load(); n > 0 {
					t.Fatalf("stdin read %d times", n)
				}
			})
		}
	}
}

// TestHelpNotAFlagValue: --help as a flag's value, after "--", or in an
// exec'd command line is not retval's.
func TestHelpNotAFlagValue(t *testing.T) {
	storeWithValue(t)
	if code, out, stderr := run(t, "", "peek", "--run", "r1", "c1", "--query", "--help"); code != 0 || !strings.Contains(out, "[0 matches") {
		t.Errorf("peek --query --help: exit %d, stdout %q, stderr %q", code, firstLine(out), stderr)
	}
	if code, out, _ := run(t, "", "peek", "--run", "r1", "--lines", "1", "--", "--help"); code != 3 || strings.Contains(out, "NAME:") {
		t.Errorf("peek -- --help: exit %d (want 3, an unknown id), stdout %q", code, firstLine(out))
	}
	if code, out, _ := run(t, "", "exec", "--run", "r1", "--call", "e1", "--", "sh", "-c", "echo \"$1\"", "sh", "--help"); code != 0 || out != "--help\n" {
		t.Errorf("exec sh --help: exit %d, stdout %q", code, out)
	}
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }
