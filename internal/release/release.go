package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// target is one platform a release binary is built for.
type target struct{ goos, goarch string }

func (t target) String() string { return t.goos + "/" + t.goarch }

// binName is the binary's file name on t.
func (t target) binName() string {
	if t.goos == "windows" {
		return "retval.exe"
	}
	return "retval"
}

// releaseTargets are the platforms of a release, in the order built.
var releaseTargets = []target{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// nfpm builds the .deb and .rpm packages; `go run` fetches it at this
// version (checked against the Go checksum database) and caches the
// build. Nothing of it is linked into retval or listed in go.mod.
const nfpm = "github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.48.0"

// sumsName is the checksum file: `sha256sum -c SHA256SUMS` checks it.
const sumsName = "SHA256SUMS"

type options struct {
	dir      string // the checkout
	out      string // where the artefacts go
	snapshot bool   // allow an untagged or modified tree
	clean    bool   // remove out first
	targets  []target
}

// stamp is what a build is named after: the version, the commit, the
// commit's time (every file's time in the artefacts), and whether the
// tree had uncommitted changes.
type stamp struct {
	version string // v1.2.3, or a pseudo-version; "+dirty" when modified
	commit  string
	time    time.Time
	dirty   bool
}

// fileVersion is the version in file names and packages: without the v.
func (s stamp) fileVersion() string { return strings.TrimPrefix(s.version, "v") }

// semverTag is a release tag: vMAJOR.MINOR.PATCH with an optional
// pre-release.
var semverTag = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)

// readStamp names the build of the checkout in dir.
func readStamp(ctx context.Context, dir string, snapshot bool) (stamp, error) {
	var s stamp
	commit, err := git(ctx, dir, "rev-parse", "HEAD")
	if err != nil {
		return s, err
	}
	s.commit = strings.TrimSpace(commit)
	ct, err := git(ctx, dir, "log", "-1", "--format=%ct", "HEAD")
	if err != nil {
		return s, err
	}
	sec, err := strconv.ParseInt(strings.TrimSpace(ct), 10, 64)
	if err != nil {
		return s, fmt.Errorf("commit time %q: %v", strings.TrimSpace(ct), err)
	}
	s.time = time.Unix(sec, 0).UTC()
	// Untracked files count, as they do for the go command's vcs.modified.
	status, err := git(ctx, dir, "status", "--porcelain")
	if err != nil {
		return s, err
	}
	s.dirty = strings.TrimSpace(status) != ""
	tags, err := git(ctx, dir, "tag", "--points-at", "HEAD")
	if err != nil {
		return s, err
	}
	var versions []string
	for _, t := range strings.Fields(tags) {
		if semverTag.MatchString(t) {
			versions = append(versions, t)
		}
	}
	switch {
	case len(versions) > 1:
		return s, fmt.Errorf("the commit has several version tags (%s)", strings.Join(versions, ", "))
	case len(versions) == 1:
		s.version = versions[0]
	case !snapshot:
		return s, errors.New("the commit has no version tag (vX.Y.Z): tag it, or build with -snapshot")
	default:
		// The go command's pseudo-version for a commit with no tag before it.
		s.version = "v0.0.0-" + s.time.Format("20060102150405") + "-" + s.commit[:12]
	}
	if s.dirty {
		if !snapshot {
			return s, errors.New("the tree has uncommitted changes: commit them, or build with -snapshot")
		}
		s.version += "+dirty"
	}
	return s, nil
}

// build makes every artefact in o.out and returns their names.
func build(ctx context.Context, o options) ([]string, error) {
	if len(o.targets) == 0 {
		o.targets = releaseTargets
	}
	st, err := readStamp(ctx, o.dir, o.snapshot)
	if err != nil {
		return nil, err
	}
	if err := prepareOut(o.out, o.clean); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "retval-release-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)

	// The targets are built, archived and packaged side by side, as many at
	// once as there are CPUs: each step of a target (the linker, the
	// compressor, nfpm) keeps about one busy.
	bins := make([]string, len(o.targets))
	if err := each(len(o.targets), func(i int) (err error) {
		bins[i], err = buildBinary(ctx, o.dir, work, o.targets[i], st)
		return err
	}); err != nil {
		return nil, err
	}
	host := target{runtime.GOOS, runtime.GOARCH}
	var hostBin string
	if i := slices.Index(o.targets, host); i >= 0 {
		hostBin = bins[i]
	} else if hostBin, err = buildBinary(ctx, o.dir, work, host, st); err != nil {
		return nil, err
	}
	docs, err := collectDocs(ctx, o, hostBin)
	if err != nil {
		return nil, err
	}
	notices, err := thirdPartyNotices(ctx, o.dir, bins)
	if err != nil {
		return nil, err
	}
	docs.add(noticesName, notices)

	if err := each(len(o.targets), func(i int) error {
		return writeArchive(o.out, o.targets[i], bins[i], st, docs)
	}); err != nil {
		return nil, err
	}
	var linux []int
	for i, t := range o.targets {
		if t.goos == "linux" {
			linux = append(linux, i)
		}
	}
	if err := each(len(linux), func(j int) error {
		i := linux[j]
		return writePackages(ctx, o.out, work, o.targets[i], bins[i], st, docs)
	}); err != nil {
		return nil, err
	}
	return writeSums(o.out)
}

// each calls f(0) … f(n-1), up to GOMAXPROCS at a time, and returns the
// error of the first that failed.
func each(n int, f func(i int) error) error {
	errs := make([]error, n)
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i := range n {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			errs[i] = f(i)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// prepareOut makes out, which must be empty unless clean says to empty it.
func prepareOut(out string, clean bool) error {
	if clean {
		if err := os.RemoveAll(out); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		return err
	}
	if len(ents) > 0 {
		return fmt.Errorf("%s is not empty: remove it, or pass -clean", out)
	}
	return nil
}

// buildBinary builds retval for t: static, without paths of this machine,
// stripped, stamped with st.
func buildBinary(ctx context.Context, dir, work string, t target, st stamp) (string, error) {
	bin := filepath.Join(work, t.goos+"_"+t.goarch, t.binName())
	ldflags := "-s -w" +
		" -X github.com/retval/retval/cmd.Version=" + st.version +
		" -X github.com/retval/retval/cmd.Commit=" + st.commit
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", bin, ".")
	cmd.Dir = dir
	// Whatever this machine's settings, the build is the same: no cgo, the
	// baseline instruction sets, and only go.mod's module versions.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.goos, "GOARCH="+t.goarch,
		"GOAMD64=v1", "GOARM64=v8.0", "GOFLAGS=-mod=readonly")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build for %s: %v\n%s", t, err, out)
	}
	return bin, nil
}

// docs are the files that go with every binary, by their path in an
// archive (under share/ as in a prefix, bin/ aside).
type docs struct {
	files []docFile
}

// add puts a file among the docs, in name order.
func (d *docs) add(name string, data []byte) {
	d.files = append(d.files, docFile{name, data})
	slices.SortFunc(d.files, func(a, b docFile) int { return strings.Compare(a.name, b.name) })
}

type docFile struct {
	name string // path in an archive, e.g. share/man/man1/retval.1
	data []byte
}

const (
	bashCompletion = "share/bash-completion/completions/retval"
	zshCompletion  = "share/zsh/site-functions/_retval"
	fishCompletion = "share/fish/vendor_completions.d/retval.fish"
)

// collectDocs reads the README, the licence and the man pages from the
// checkout and asks the host's binary for the shell completions.
func collectDocs(ctx context.Context, o options, hostBin string) (*docs, error) {
	d := &docs{}
	for _, name := range []string{"README.md", "LICENSE"} {
		b, err := os.ReadFile(filepath.Join(o.dir, name))
		if err != nil {
			return nil, err
		}
		d.files = append(d.files, docFile{name, b})
	}
	pages, err := filepath.Glob(filepath.Join(o.dir, "docs", "man", "*.1"))
	if err != nil {
		return nil, err
	}
	if len(pages) == 0 {
		return nil, errors.New("no man pages in docs/man (go generate ./cmd makes them)")
	}
	slices.Sort(pages)
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		d.files = append(d.files, docFile{"share/man/man1/" + filepath.Base(p), b})
	}
	for shell, name := range map[string]string{"bash": bashCompletion, "zsh": zshCompletion, "fish": fishCompletion} {
		out, err := exec.CommandContext(ctx, hostBin, "completion", shell).Output()
		if err != nil {
			return nil, fmt.Errorf("retval completion %s: %v", shell, err)
		}
		d.files = append(d.files, docFile{name, out})
	}
	slices.SortFunc(d.files, func(a, b docFile) int { return strings.Compare(a.name, b.name) })
	return d, nil
}

// entry is one file of an archive.
type entry struct {
	name string
	mode fs.FileMode
	data []byte
}

// archiveEntries lists an archive's files in the order written: the
// directories they need, then each file, sorted by name.
func archiveEntries(root string, t target, bin []byte, d *docs) []entry {
	files := []entry{{name: "bin/" + t.binName(), mode: 0o755, data: bin}}
	for _, f := range d.files {
		files = append(files, entry{name: f.name, mode: 0o644, data: f.data})
	}
	dirs := map[string]bool{}
	for _, f := range files {
		for dir := path.Dir(f.name); dir != "."; dir = path.Dir(dir) {
			dirs[dir] = true
		}
	}
	var all []entry
	all = append(all, entry{name: root + "/", mode: fs.ModeDir | 0o755})
	for dir := range dirs {
		all = append(all, entry{name: root + "/" + dir + "/", mode: fs.ModeDir | 0o755})
	}
	for _, f := range files {
		f.name = root + "/" + f.name
		all = append(all, f)
	}
	slices.SortFunc(all, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	return all
}

// archiveRoot is the directory an archive unpacks into, and its name
// without the extension: retval_1.2.3_linux_amd64.
func archiveRoot(t target, st stamp) string {
	return "retval_" + st.fileVersion() + "_" + t.goos + "_" + t.goarch
}

// writeArchive writes a .tar.gz (a .zip for windows) of the binary and
// docs, every time the commit's, owned by root, in name order.
func writeArchive(out string, t target, binPath string, st stamp, d *docs) error {
	bin, err := os.ReadFile(binPath)
	if err != nil {
		return err
	}
	root := archiveRoot(t, st)
	entries := archiveEntries(root, t, bin, d)
	var buf bytes.Buffer
	name := root + ".tar.gz"
	if t.goos == "windows" {
		name = root + ".zip"
		err = writeZip(&buf, entries, st.time)
	} else {
		err = writeTarGz(&buf, entries, st.time)
	}
	if err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	return os.WriteFile(filepath.Join(out, name), buf.Bytes(), 0o644)
}

// archiveLevel is the archives' compression: gzip's default, which gives
// files 0.4% larger than -9 (6.90 MB rather than 6.88 for linux/amd64)
// in half the time.
const archiveLevel = flate.DefaultCompression

func writeTarGz(w io.Writer, entries []entry, mtime time.Time) error {
	// No name and no time in the gzip header (gzip -n).
	zw, err := gzip.NewWriterLevel(w, archiveLevel)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: int64(e.mode.Perm()), ModTime: mtime, Format: tar.FormatPAX}
		if e.mode.IsDir() {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

func writeZip(w io.Writer, entries []entry, mtime time.Time) error {
	zw := zip.NewWriter(w)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, archiveLevel)
	})
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: mtime}
		if e.mode.IsDir() {
			h.Method = zip.Store
		}
		h.SetMode(e.mode)
		fw, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := fw.Write(e.data); err != nil {
			return err
		}
	}
	return zw.Close()
}

// nfpmConfig is the part of nfpm's configuration retval uses (nfpm reads
// YAML, of which JSON is a part).
type nfpmConfig struct {
	Name        string        `json:"name"`
	Arch        string        `json:"arch"`
	Platform    string        `json:"platform"`
	Version     string        `json:"version"`
	Maintainer  string        `json:"maintainer"`
	Description string        `json:"description"`
	Homepage    string        `json:"homepage"`
	License     string        `json:"license"`
	Section     string        `json:"section"`
	Contents    []nfpmContent `json:"contents"`
	RPM         struct {
		BuildHost string `json:"buildhost"`
		Group     string `json:"group"`
	} `json:"rpm"`
}

type nfpmContent struct {
	Src      string       `json:"src"`
	Dst      string       `json:"dst"`
	Type     string       `json:"type,omitempty"`
	Packager string       `json:"packager,omitempty"`
	FileInfo nfpmFileInfo `json:"file_info"`
}

type nfpmFileInfo struct {
	Mode fs.FileMode `json:"mode"`
}

// packageContents are where the packages install each file: the binary
// in /usr/bin, man pages gzipped in /usr/share/man/man1, completions
// where bash-completion, zsh (Debian's vendor-completions, Fedora's
// site-functions) and fish look for them, the README in the
// distribution's doc directory, and the licence where each distribution
// keeps a package's: Debian's /usr/share/doc/retval/copyright, the rpm's
// %license file /usr/share/licenses/retval/LICENSE.
func packageContents(work, bin string, d *docs) ([]nfpmContent, error) {
	c := []nfpmContent{{Src: bin, Dst: "/usr/bin/retval", FileInfo: nfpmFileInfo{0o755}}}
	add := func(data []byte, dst, typ, packager string) error {
		src := filepath.Join(work, "pkg", filepath.FromSlash(dst))
		if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(src, data, 0o644); err != nil {
			return err
		}
		c = append(c, nfpmContent{Src: src, Dst: dst, Type: typ, Packager: packager, FileInfo: nfpmFileInfo{0o644}})
		return nil
	}
	for _, f := range d.files {
		var err error
		switch {
		case strings.HasPrefix(f.name, "share/man/"):
			var gz []byte
			if gz, err = gzipBytes(f.data); err == nil {
				err = add(gz, "/usr/"+f.name+".gz", "", "")
			}
		case f.name == zshCompletion:
			if err = add(f.data, "/usr/share/zsh/vendor-completions/_retval", "", "deb"); err == nil {
				err = add(f.data, "/usr/share/zsh/site-functions/_retval", "", "rpm")
			}
		case strings.HasPrefix(f.name, "share/"):
			err = add(f.data, "/usr/"+f.name, "", "")
		case f.name == "README.md":
			err = add(f.data, "/usr/share/doc/retval/README.md", "", "")
		case f.name == "LICENSE":
			if err = add(f.data, "/usr/share/doc/retval/copyright", "", "deb"); err == nil {
				err = add(f.data, "/usr/share/licenses/retval/LICENSE", "license", "rpm")
			}
		case f.name == noticesName:
			if err = add(f.data, "/usr/share/doc/retval/"+noticesName, "", "deb"); err == nil {
				err = add(f.data, "/usr/share/licenses/retval/"+noticesName, "license", "rpm")
			}
		default:
			err = fmt.Errorf("no place in the packages for %s", f.name)
		}
		if err != nil {
			return nil, err
		}
	}
	return c, nil
}

// gzipBytes compresses b as gzip -9n would: no name, no time.
func gzipBytes(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writePackages writes the .deb and the .rpm for a linux target with nfpm.
func writePackages(ctx context.Context, out, work string, t target, bin string, st stamp, d *docs) error {
	dir := filepath.Join(work, "nfpm_"+t.goarch)
	contents, err := packageContents(dir, bin, d)
	if err != nil {
		return err
	}
	cfg := nfpmConfig{
		Name: "retval", Arch: t.goarch, Platform: "linux", Version: st.version,
		Maintainer:  "retval maintainers",
		Description: "keep big tool results out of an LLM agent's context",
		Homepage:    "https://github.com/retval/retval",
		License:     "MIT",
		Section:     "utils",
		Contents:    contents,
	}
	// A host name would differ from one build machine to the next.
	cfg.RPM.BuildHost = "retval"
	cfg.RPM.Group = "Development/Tools"
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	config := filepath.Join(dir, "nfpm.yaml")
	if err := os.WriteFile(config, b, 0o644); err != nil {
		return err
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	for _, packager := range []string{"deb", "rpm"} {
		cmd := exec.CommandContext(ctx, "go", "run", nfpm, "package", "--config", config, "--packager", packager, "--target", abs+string(filepath.Separator))
		cmd.Dir = dir
		// nfpm stamps every file, and the archives, with SOURCE_DATE_EPOCH.
		// It runs here, whatever GOOS and GOARCH this environment sets.
		cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH="+strconv.FormatInt(st.time.Unix(), 10), "GOFLAGS=", "GOOS=", "GOARCH=")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("nfpm %s for %s: %v\n%s", packager, t, err, out)
		}
	}
	return nil
}

// writeSums writes SHA256SUMS over every file in out, in the format of
// sha256sum, and returns the files' names.
func writeSums(out string) ([]string, error) {
	ents, err := os.ReadDir(out)
	if err != nil {
		return nil, err
	}
	var names []string
	var sums bytes.Buffer
	for _, e := range ents {
		if !e.Type().IsRegular() {
			return nil, fmt.Errorf("%s: unexpected %s in the output", e.Name(), e.Type())
		}
		f, err := os.Open(filepath.Join(out, e.Name()))
		if err != nil {
			return nil, err
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(h.Sum(nil)), e.Name())
		names = append(names, e.Name())
	}
	if err := os.WriteFile(filepath.Join(out, sumsName), sums.Bytes(), 0o644); err != nil {
		return nil, err
	}
	return append(names, sumsName), nil
}

// git runs git in dir and returns its output.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}
