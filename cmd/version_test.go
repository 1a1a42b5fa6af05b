package cmd

import (
	"bytes"
	"io"
	"runtime/debug"
	"strings"
	"testing"
)

// TestDescribeBuild: retval --version says what the build is, from the
// release stamp (-ldflags -X) first, else from what the go command
// recorded: a module version for go install …@vX, the commit and a
// modified tree for a build from a checkout.
func TestDescribeBuild(t *testing.T) {
	const rev = "ed11cccb862d96a4b0ef674008bc69352ce22356"
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{
			{Key: "-trimpath", Value: "true"},
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: rev},
			{Key: "vcs.time", Value: "2026-02-04T05:21:55Z"},
			{Key: "vcs.modified", Value: modified},
		}
	}
	info := func(version string, settings []debug.BuildSetting) *debug.BuildInfo {
		bi := &debug.BuildInfo{Settings: settings}
		bi.Main.Path, bi.Main.Version = "github.com/retval/retval", version
		return bi
	}
	for _, tc := range []struct {
		name            string
		version, commit string
		bi              *debug.BuildInfo
		want            string
	}{
		{"go install @tag", "", "", info("v1.2.3", nil),
			"v1.2.3"},
		{"checkout at a tag", "", "", info("v1.2.3", vcs("false")),
			"v1.2.3 (commit " + rev + ")"},
		{"checkout between tags", "", "", info("v0.0.0-20260204052155-ed11cccb862d", vcs("false")),
			"v0.0.0-20260204052155-ed11cccb862d (commit " + rev + ")"},
		{"dirty checkout", "", "", info("v0.0.0-20260204052155-ed11cccb862d+dirty", vcs("true")),
			"v0.0.0-20260204052155-ed11cccb862d+dirty (commit " + rev + ", with uncommitted changes)"},
		{"go without a version for the tree", "", "", info("(devel)", vcs("true")),
			"devel (commit " + rev + ", with uncommitted changes)"},
		{"no vcs information", "", "", info("(devel)", nil),
			"devel (built without version control information)"},
		{"no build information", "", "", nil,
			"devel (built without version control information)"},
		{"release stamp wins", "v1.2.3", rev, info("(devel)", nil),
			"v1.2.3 (commit " + rev + ")"},
		{"release stamp of a dirty tree", "v0.0.0-20260204052155-ed11cccb862d+dirty", rev, info("v9.9.9", vcs("false")),
			"v0.0.0-20260204052155-ed11cccb862d+dirty (commit " + rev + ", with uncommitted changes)"},
		{"release stamp without a commit", "v1.2.3", "", info("(devel)", vcs("false")),
			"v1.2.3"},
	} {
		if got := describeBuild(tc.version, tc.commit, tc.bi); got != tc.want {
			t.Errorf("%s: describeBuild = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestVersionFlag: --version and -v print one line for the build this
// test runs in; the help carries no version (it is the same in every
// build, and so are the man pages made from it).
func TestVersionFlag(t *testing.T) {
	bi, _ := debug.ReadBuildInfo()
	want := "retval version " + describeBuild(Version, Commit, bi) + "\n"
	for _, flag := range []string{"--version", "-v"} {
		code, stdout, stderr := run(t, "", flag)
		if code != 0 || stderr != "" || stdout != want {
			t.Errorf("retval %s: exit %d, stdout %q, stderr %q; want %q", flag, code, stdout, stderr, want)
		}
	}
	_, help, _ := run(t, "", "--help")
	if strings.Contains(help, "VERSION") || strings.Contains(help, versionFlagGate) {
		t.Errorf("retval --help shows a version:\n%s", help)
	}
}

// TestVersionAlone: the version flag alone is answered without building
// the commands (a script that checks the version pays start-up, not
// urfave/cli's setup of fourteen commands), and answers as the flag
// library does with every command built.
func TestVersionAlone(t *testing.T) {
	for _, flag := range []string{"--version", "-version", "-v", "--v"} {
		args := []string{"retval", flag}
		var out1, err1, out2, err2 bytes.Buffer
		c1 := Main(args, strings.NewReader(""), &out1, &err1)
		c2 := mainFor("", args, strings.NewReader(""), &out2, &err2)
		if c1 != c2 || out1.String() != out2.String() || err1.String() != err2.String() {
			t.Errorf("retval %s: exit %d, stdout %q, stderr %q; the flag library answers exit %d, stdout %q, stderr %q",
				flag, c1, out1.String(), err1.String(), c2, out2.String(), err2.String())
		}
		if raceEnabled {
			continue // allocations are counted without -race
		}
		n := testing.AllocsPerRun(10, func() {
			out1.Reset()
			Main(args, strings.NewReader(""), &out1, io.Discard)
		})
		if n > 50 {
			t.Errorf("retval %s makes %.0f allocations: it builds the commands", flag, n)
		}
	}
}
