package cmd

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v3"
)

// Version and Commit name the build where the release script stamps them:
//
//	-ldflags "-X github.com/retval/retval/cmd.Version=v1.2.3 -X github.com/retval/retval/cmd.Commit=<sha>"
//
// (a Version ending in "+dirty" says the tree had uncommitted changes).
// Left empty, retval --version reads what the go command recorded
// (runtime/debug.ReadBuildInfo): the module version for `go install
// github.com/retval/retval@v1.2.3`, and for a build from a git checkout
// the commit and whether the tree was modified.
var (
	Version string
	Commit  string
)

func init() { cli.VersionPrinter = func(c *cli.Command) { printVersion(c.Root().Writer) } }

// versionFlagGate is the root command's Version: urfave/cli offers
// --version only when it is set, and printVersion, not this text, says
// what the build is (reading the build information costs every call
// allocations that only --version needs).
const versionFlagGate = "see retval --version"

// rootHelpTemplate is urfave/cli's root help without its VERSION section:
// like git's, restic's and jq's, retval's help does not carry the build's
// version (--version prints it), so the help and the man pages generated
// from it are the same in every build.
var rootHelpTemplate = strings.Replace(cli.RootCommandHelpTemplate,
	"{{if .Version}}{{if not .HideVersion}}\n\nVERSION:\n   {{.Version}}{{end}}{{end}}", "", 1)

// printVersion is retval --version: one line naming the version and,
// where known, the commit.
func printVersion(w io.Writer) {
	bi, _ := debug.ReadBuildInfo()
	fmt.Fprintf(w, "retval version %s\n", describeBuild(Version, Commit, bi))
}

// buildVersion is the version alone (for the MCP server's serverInfo):
// "v1.2.3", a pseudo-version, or "devel".
func buildVersion() string {
	bi, _ := debug.ReadBuildInfo()
	v, _, _ := buildStamp(Version, Commit, bi)
	return v
}

// describeBuild is what retval --version says after "retval version ":
// the version, then the commit in parentheses when one is known, marked
// when the tree it was built from had uncommitted changes, e.g.
//
//	v1.2.3 (commit 0123…cdef)
//	v0.0.0-20260204052155-ed11cccb862d+dirty (commit ed11…2356, with uncommitted changes)
//	devel (built without version control information)
func describeBuild(version, commit string, bi *debug.BuildInfo) string {
	v, rev, modified := buildStamp(version, commit, bi)
	switch {
	case rev == "" && v == "devel":
		return v + " (built without version control information)"
	case rev == "":
		return v
	case modified:
		return v + " (commit " + rev + ", with uncommitted changes)"
	}
	return v + " (commit " + rev + ")"
}

// buildStamp reads the version, commit and modified flag from the
// release stamp where there is one, else from the build information.
func buildStamp(version, commit string, bi *debug.BuildInfo) (v, rev string, modified bool) {
	if version != "" {
		return version, commit, strings.HasSuffix(version, "+dirty")
	}
	v = "devel"
	if bi == nil {
		return v, "", false
	}
	// "(devel)" is what the go command records when it knows no version.
	if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return v, rev, modified
}
