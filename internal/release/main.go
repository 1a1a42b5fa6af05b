// Command release builds retval's release artefacts from a git checkout:
// static binaries for linux, darwin and windows on amd64 and arm64, an
// archive of each with the README, the licence, the licences of the code
// it links (THIRD_PARTY_LICENSES), the man pages and the shell
// completions, .deb and .rpm packages for linux, and SHA256SUMS.
//
// Usage (from the checkout; scripts/release runs the same):
//
//	go run ./internal/release [-snapshot] [-out dist] [-clean] [-targets linux/amd64,...]
//
// Without -snapshot the commit must carry a version tag (vX.Y.Z) and the
// tree must be clean. With it, the version is a Go pseudo-version of the
// commit (v0.0.0-YYYYMMDDhhmmss-abcdef123456), "+dirty" when the tree
// has uncommitted changes. The same commit built with the same Go gives
// the same bytes: every file's time is the commit's, and nothing of the
// machine that built it (paths, user, host name) is recorded.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	o := options{dir: "."}
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	fs.BoolVar(&o.snapshot, "snapshot", false, "build an untagged or modified tree, versioned after its commit")
	fs.StringVar(&o.out, "out", "dist", "directory for the artefacts (must not exist, or be empty, unless -clean)")
	fs.BoolVar(&o.clean, "clean", false, "remove -out first")
	targets := fs.String("targets", "", "comma-separated GOOS/GOARCH pairs (default: all six release targets)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if *targets != "" {
		for _, t := range strings.Split(*targets, ",") {
			goos, goarch, ok := strings.Cut(t, "/")
			if !ok {
				fmt.Fprintf(os.Stderr, "release: -targets: %q is not GOOS/GOARCH\n", t)
				os.Exit(2)
			}
			o.targets = append(o.targets, target{goos, goarch})
		}
	}
	files, err := build(context.Background(), o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "release: %v\n", err)
		os.Exit(1)
	}
	for _, f := range files {
		fmt.Println(f)
	}
}
