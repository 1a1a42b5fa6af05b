package main

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// noticesName is the file, beside LICENSE, that holds the licences of the
// code a binary links besides retval's own.
const noticesName = "THIRD_PARTY_LICENSES"

// licenceFile matches the names of the files in a module's root that carry
// its licence and the notices it asks to travel with it.
var licenceFile = regexp.MustCompile(`(?i)^(licen[cs]e|copying|notice|patents)([.-].*)?$`)

// thirdPartyNotices is the licence texts of the Go standard library and of
// every module the binaries link (the union of their build information),
// each under a line naming the module and its version: the binaries carry
// their code, and their licences ask that their notices go with it. A
// module without a licence file is an error: it cannot be shipped.
func thirdPartyNotices(ctx context.Context, dir string, bins []string) ([]byte, error) {
	mods := map[string]string{} // path → version
	var goVersion string
	for _, b := range bins {
		bi, err := buildinfo.ReadFile(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b, err)
		}
		goVersion = bi.GoVersion
		for _, d := range bi.Deps {
			if d.Replace != nil {
				d = d.Replace
			}
			mods[d.Path] = d.Version
		}
	}
	goroot, err := goEnv(ctx, dir, "GOROOT")
	if err != nil {
		return nil, err
	}
	dirs, err := moduleDirs(ctx, dir)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "retval is built with the Go standard library and links the modules below.\nTheir licences and notices follow, each under a line naming it.\n")
	if err := appendLicences(&out, "Go standard library "+goVersion, goroot); err != nil {
		return nil, err
	}
	for _, path := range slices.Sorted(maps.Keys(mods)) {
		d, ok := dirs[path+"@"+mods[path]]
		if !ok {
			return nil, fmt.Errorf("module %s@%s is not in the module cache (go mod download)", path, mods[path])
		}
		if err := appendLicences(&out, path+" "+mods[path], d); err != nil {
			return nil, err
		}
	}
	return out.Bytes(), nil
}

// appendLicences appends the licence files in dir's root, in name order.
func appendLicences(out *bytes.Buffer, what, dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	n := 0
	for _, e := range ents {
		if !e.Type().IsRegular() || !licenceFile.MatchString(e.Name()) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "\n==== %s: %s ====\n\n", what, e.Name())
		out.Write(b)
		if !bytes.HasSuffix(b, []byte("\n")) {
			out.WriteByte('\n')
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("%s has no licence file in %s", what, dir)
	}
	return nil
}

// moduleDirs is where each module of the build list is, by path@version.
func moduleDirs(ctx context.Context, dir string) (map[string]string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Path}}@{{.Version}}\t{{.Dir}}", "all")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly")
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m all: %v", err)
	}
	dirs := map[string]string{}
	for line := range strings.Lines(string(b)) {
		mod, d, ok := strings.Cut(strings.TrimSpace(line), "\t")
		if ok && d != "" {
			dirs[mod] = d
		}
	}
	return dirs, nil
}

func goEnv(ctx context.Context, dir, name string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "env", name)
	cmd.Dir = dir
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(b)), nil
}
