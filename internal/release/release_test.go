package main

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// The release checks build retval a dozen times over; CI runs them in a
// step of their own (.ci/run), not with every go test.
func needReleaseTest(t *testing.T) {
	t.Helper()
	if os.Getenv("RETVAL_RELEASE_TEST") != "1" {
		t.Skip("builds every release artefact twice; run with RETVAL_RELEASE_TEST=1 (.ci/run does)")
	}
}

// needTool finds a program the check needs; in CI its absence is a
// failure (.ci/run installs it), elsewhere a skip.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not found (.ci/run installs it)", name)
		}
		t.Skipf("%s not found", name)
	}
	return p
}

// checkout is the root of the git checkout these tests run in.
func checkout(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func headCommit(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// TestReleaseSnapshot builds the release of this checkout twice, as
// `go run ./internal/release -snapshot` does, and checks what a user
// gets: six archives, a .deb and an .rpm per linux architecture, all
// byte-identical from one build to the next, SHA256SUMS that
// `sha256sum -c` accepts, archives holding the binary, README, licence,
// man pages and completions, binaries that name the commit, and a .deb
// that puts every file where Debian looks for it (man finds the page).
func TestReleaseSnapshot(t *testing.T) {
	needReleaseTest(t)
	dir := checkout(t)
	commit := headCommit(t, dir)
	ctx := context.Background()
	outs := []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")}
	var lists [2][]string
	for i, out := range outs {
		var err error
		if lists[i], err = build(ctx, options{dir: dir, out: out, snapshot: true}); err != nil {
			t.Fatalf("build %d: %v", i+1, err)
		}
	}
	st, err := readStamp(ctx, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if st.commit != commit {
		t.Fatalf("the stamp names %s, HEAD is %s", st.commit, commit)
	}
	out := outs[0]

	// Six archives, four packages, the sums; the same bytes twice.
	var archives []string
	for _, tg := range releaseTargets {
		ext := ".tar.gz"
		if tg.goos == "windows" {
			ext = ".zip"
		}
		archives = append(archives, archiveRoot(tg, st)+ext)
	}
	for _, a := range archives {
		if !slices.Contains(lists[0], a) {
			t.Errorf("no %s among %v", a, lists[0])
		}
	}
	for _, glob := range []string{"*_amd64.deb", "*_arm64.deb", "*.x86_64.rpm", "*.aarch64.rpm"} {
		if m, _ := filepath.Glob(filepath.Join(out, glob)); len(m) != 1 {
			t.Errorf("%s: %d packages, want 1", glob, len(m))
		}
	}
	if len(lists[0]) != len(archives)+4+1 {
		t.Errorf("artefacts %v: want %d archives, 4 packages and %s", lists[0], len(archives), sumsName)
	}
	if !slices.Equal(lists[0], lists[1]) {
		t.Fatalf("two builds made different files:\n%v\n%v", lists[0], lists[1])
	}
	for _, name := range lists[0] {
		a, err := os.ReadFile(filepath.Join(outs[0], name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(outs[1], name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two builds of one commit", name)
		}
	}

	checkSums(t, out, lists[0])
	wantFiles := archiveFiles(t, dir)
	for i, tg := range releaseTargets {
		checkArchive(t, filepath.Join(out, archives[i]), archiveRoot(tg, st), tg, wantFiles)
	}

	// The binary for this machine, from its archive, names the commit.
	host := target{runtime.GOOS, runtime.GOARCH}
	if i := slices.Index(releaseTargets, host); i >= 0 {
		bin := extractFile(t, filepath.Join(out, archives[i]), archiveRoot(host, st)+"/bin/"+host.binName())
		checkVersion(t, bin, st.version, commit)
	}
	if host == (target{"linux", "amd64"}) {
		checkReadmeArchiveLine(t, out, archives[slices.Index(releaseTargets, host)], st, commit)
	}

	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		checkDeb(t, out, st, commit)
		checkRPM(t, out)
	}
}

// checkSums verifies SHA256SUMS: every other artefact listed once, with
// its digest, and sha256sum -c agrees.
func checkSums(t *testing.T, out string, names []string) {
	t.Helper()
	f, err := os.Open(filepath.Join(out, sumsName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var listed []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("%s: line %q is not sha256sum's format", sumsName, sc.Text())
		}
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if h := sha256.Sum256(b); hex.EncodeToString(h[:]) != sum {
			t.Errorf("%s: %s's digest is not %s", sumsName, name, sum)
		}
		listed = append(listed, name)
	}
	if want := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == sumsName }); !slices.Equal(listed, want) {
		t.Errorf("%s lists %v, want %v", sumsName, listed, want)
	}
	cmd := exec.Command(needTool(t, "sha256sum"), "--strict", "-c", sumsName)
	cmd.Dir = out
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("sha256sum -c %s: %v\n%s", sumsName, err, b)
	}
}

// archiveFiles is what every archive holds besides the binary, from the
// checkout: README, LICENSE where there is one, each man page, and the
// three completions.
func archiveFiles(t *testing.T, dir string) []string {
	t.Helper()
	want := []string{"README.md", bashCompletion, fishCompletion, zshCompletion}
	if _, err := os.Stat(filepath.Join(dir, "LICENSE")); err == nil {
		want = append(want, "LICENSE")
	}
	pages, _ := filepath.Glob(filepath.Join(dir, "docs", "man", "*.1"))
	if len(pages) < 2 {
		t.Fatalf("docs/man holds %d pages", len(pages))
	}
	for _, p := range pages {
		want = append(want, "share/man/man1/"+filepath.Base(p))
	}
	return want
}

// checkArchive lists an archive: everything under one directory named
// after it, the binary executable, the files of archiveFiles.
func checkArchive(t *testing.T, file, root string, tg target, docs []string) {
	t.Helper()
	bin := "bin/" + tg.binName()
	want := append([]string{bin}, docs...)
	slices.Sort(want)
	var got []string
	forEachFile(t, file, func(name string, mode os.FileMode, _ io.Reader) {
		rel, ok := strings.CutPrefix(name, root+"/")
		if !ok {
			t.Errorf("%s: %s is outside %s/", filepath.Base(file), name, root)
			return
		}
		if rel == bin && mode&0o111 == 0 {
			t.Errorf("%s: %s is not executable (%v)", filepath.Base(file), name, mode)
		}
		got = append(got, rel)
	})
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("%s holds %v, want %v", filepath.Base(file), got, want)
	}
}

// forEachFile calls f for each regular file of a .tar.gz or .zip.
func forEachFile(t *testing.T, file string, f func(name string, mode os.FileMode, r io.Reader)) {
	t.Helper()
	if strings.HasSuffix(file, ".zip") {
		zr, err := zip.OpenReader(file)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		for _, zf := range zr.File {
			if zf.Mode().IsDir() {
				continue
			}
			rc, err := zf.Open()
			if err != nil {
				t.Fatal(err)
			}
			f(zf.Name, zf.Mode(), rc)
			rc.Close()
		}
		return
	}
	fh, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if h.Typeflag == tar.TypeReg {
			f(h.Name, h.FileInfo().Mode(), tr)
		}
	}
}

// extractFile writes one file of an archive to a temporary executable.
func extractFile(t *testing.T, file, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(name))
	found := false
	forEachFile(t, file, func(n string, _ os.FileMode, r io.Reader) {
		if n != name {
			return
		}
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o755); err != nil {
			t.Fatal(err)
		}
		found = true
	})
	if !found {
		t.Fatalf("%s has no %s", filepath.Base(file), name)
	}
	return dst
}

// readmeArchiveLine is the README's install line for an archive.
const readmeArchiveLine = "sha256sum --ignore-missing -c SHA256SUMS && tar -xzf retval_VERSION_linux_amd64.tar.gz"

// checkReadmeArchiveLine runs the README's line where a user would have
// downloaded SHA256SUMS and one archive, and runs what it unpacked.
func checkReadmeArchiveLine(t *testing.T, out, archive string, st stamp, commit string) {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(checkout(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), readmeArchiveLine) {
		t.Errorf("README.md does not say %q", readmeArchiveLine)
	}
	dl := t.TempDir()
	for _, name := range []string{sumsName, archive} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dl, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("sh", "-c", strings.ReplaceAll(readmeArchiveLine, "VERSION", st.fileVersion()))
	cmd.Dir = dl
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd.Args[2], err, b)
	}
	checkVersion(t, filepath.Join(dl, archiveRoot(target{"linux", "amd64"}, st), "bin", "retval"), st.version, commit)
}

// checkVersion runs bin --version: it names the version and the commit.
func checkVersion(t *testing.T, bin, version, commit string) {
	t.Helper()
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", bin, err, out)
	}
	want := "retval version " + version + " (commit " + commit
	if !strings.HasPrefix(string(out), want) {
		t.Errorf("%s --version = %q, want it to start %q", bin, out, want)
	}
}

// checkDeb installs the amd64 .deb with dpkg into a scratch root and
// checks each file's place; man, pointed at its man directory, finds the
// page.
func checkDeb(t *testing.T, out string, st stamp, commit string) {
	t.Helper()
	debs, _ := filepath.Glob(filepath.Join(out, "*_amd64.deb"))
	if len(debs) != 1 {
		t.Fatalf("amd64 .deb: %v", debs)
	}
	root := t.TempDir()
	admin := filepath.Join(root, "var/lib/dpkg")
	for _, d := range []string{"info", "updates", "triggers"} {
		if err := os.MkdirAll(filepath.Join(admin, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"status", "available"} {
		if err := os.WriteFile(filepath.Join(admin, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dpkg := exec.Command(needTool(t, "dpkg"), "--root="+root, "--admindir="+admin, "--log=/dev/null",
		"--force-not-root", "--force-script-chrootless", "-i", debs[0])
	if b, err := dpkg.CombinedOutput(); err != nil {
		t.Fatalf("dpkg -i: %v\n%s", err, b)
	}
	for _, f := range []string{
		"usr/bin/retval",
		"usr/share/man/man1/retval.1.gz",
		"usr/share/man/man1/retval-peek.1.gz",
		"usr/share/bash-completion/completions/retval",
		"usr/share/zsh/vendor-completions/_retval",
		"usr/share/fish/vendor_completions.d/retval.fish",
		"usr/share/doc/retval/README.md",
	} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf(".deb: %v", err)
		}
	}
	checkVersion(t, filepath.Join(root, "usr/bin/retval"), st.version, commit)

	man := needTool(t, "man")
	manDir := filepath.Join(root, "usr/share/man")
	cmd := exec.Command(man, "-w", "retval-peek")
	cmd.Env = append(os.Environ(), "MANPATH="+manDir)
	b, err := cmd.CombinedOutput()
	if got, want := strings.TrimSpace(string(b)), filepath.Join(manDir, "man1", "retval-peek.1.gz"); err != nil || got != want {
		t.Errorf("MANPATH=%s man -w retval-peek: %q (%v), want %q", manDir, got, err, want)
	}
	cmd = exec.Command(man, "-l", filepath.Join(manDir, "man1", "retval.1.gz"))
	cmd.Env = append(os.Environ(), "MANPAGER=cat", "MANWIDTH=80", "LC_ALL=C")
	b, err = cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(b), "keep big tool results out of an LLM agent") {
		t.Errorf("man -l retval.1.gz: %v\n%s", err, b)
	}
}

// checkRPM lists the x86_64 .rpm's files (bsdtar reads its cpio payload).
func checkRPM(t *testing.T, out string) {
	t.Helper()
	rpms, _ := filepath.Glob(filepath.Join(out, "*.x86_64.rpm"))
	if len(rpms) != 1 {
		t.Fatalf("x86_64 .rpm: %v", rpms)
	}
	b, err := exec.Command(needTool(t, "bsdtar"), "-tf", rpms[0]).CombinedOutput()
	if err != nil {
		t.Fatalf("bsdtar -tf: %v\n%s", err, b)
	}
	list := strings.Fields(string(b))
	for _, f := range []string{
		"./usr/bin/retval",
		"./usr/share/man/man1/retval.1.gz",
		"./usr/share/bash-completion/completions/retval",
		"./usr/share/zsh/site-functions/_retval",
		"./usr/share/fish/vendor_completions.d/retval.fish",
		"./usr/share/doc/retval/README.md",
	} {
		if !slices.Contains(list, f) {
			t.Errorf(".rpm has no %s:\n%s", f, b)
		}
	}
}
