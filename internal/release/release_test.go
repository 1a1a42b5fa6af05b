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
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/retval/retval/internal/installdoc"
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

// testVersion is the version the release tests tag and install: a
// release's, so every artefact has the name a user sees.
const testVersion = "0.99.0"

// TestRelease builds the release of this checkout's commit, tagged
// v0.99.0, twice, in two clones at different paths, and checks what a
// user gets: six archives, a .deb and an .rpm per linux architecture, all
// byte-identical from one build to the next; SHA256SUMS that sha256sum
// -c accepts; archives holding the binary, README, LICENSE, man pages and
// completions; binaries that name the commit. Then it runs the README's
// install lines for the archive, the .deb and the .rpm as written, the
// packages installed by dpkg and rpm as root over this very system, which
// a mount namespace keeps apart (every write lands in overlays in the
// test's directory): each file in its place, man finds the page.
func TestRelease(t *testing.T) {
	needReleaseTest(t)
	a := releaseClone(t, checkout(t), "v"+testVersion)
	b := filepath.Join(t.TempDir(), "elsewhere", "retval")
	runGit(t, "", "clone", "--quiet", "--no-tags", a, b)
	commit := headCommit(t, a)
	runGit(t, b, "checkout", "--quiet", "--detach", commit)
	runGit(t, b, "tag", "v"+testVersion)

	ctx := context.Background()
	outs := []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")}
	var lists [2][]string
	for i, dir := range []string{a, b} {
		var err error
		if lists[i], err = build(ctx, options{dir: dir, out: outs[i]}); err != nil {
			t.Fatalf("build %d: %v", i+1, err)
		}
	}
	st, err := readStamp(ctx, a, false)
	if err != nil {
		t.Fatal(err)
	}
	if st.version != "v"+testVersion || st.commit != commit {
		t.Fatalf("the stamp names %s at %s, want v%s at %s", st.version, st.commit, testVersion, commit)
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
	packages := []string{
		"retval_" + testVersion + "_amd64.deb", "retval_" + testVersion + "_arm64.deb",
		"retval-" + testVersion + "-1.aarch64.rpm", "retval-" + testVersion + "-1.x86_64.rpm",
	}
	want := append(append(slices.Clone(archives), packages...), sumsName)
	slices.Sort(want)
	if got := slices.Sorted(slices.Values(lists[0])); !slices.Equal(got, want) {
		t.Fatalf("the release is %q, want %q", got, want)
	}
	if !slices.Equal(lists[0], lists[1]) {
		t.Fatalf("two builds made different files:\n%v\n%v", lists[0], lists[1])
	}
	for _, name := range lists[0] {
		x, err := os.ReadFile(filepath.Join(outs[0], name))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(outs[1], name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two builds of one commit", name)
		}
	}

	checkSums(t, out, lists[0])
	wantFiles := archiveFiles(t, a)
	for i, tg := range releaseTargets {
		checkArchive(t, filepath.Join(out, archives[i]), archiveRoot(tg, st), tg, wantFiles)
	}

	// The binary for this machine, from its archive, names the commit.
	host := target{runtime.GOOS, runtime.GOARCH}
	if i := slices.Index(releaseTargets, host); i >= 0 {
		bin := extractFile(t, filepath.Join(out, archives[i]), archiveRoot(host, st)+"/bin/"+host.binName())
		checkVersion(t, bin, st.version, commit)
		notices, err := os.ReadFile(extractFile(t, filepath.Join(out, archives[i]), archiveRoot(host, st)+"/"+noticesName))
		if err != nil {
			t.Fatal(err)
		}
		checkNotices(t, notices, bin)
	}
	if host != (target{"linux", "amd64"}) {
		t.Logf("the README's lines install linux/amd64 artefacts: not run on %s", host)
		return
	}
	license := wantFiles["LICENSE"]
	t.Run("archive", func(t *testing.T) { archiveLine(t, out, st, commit) })
	t.Run("deb", func(t *testing.T) {
		line := installdoc.Command(t, "sudo dpkg -i retval_VERSION_amd64.deb", testVersion)
		root := installAsRoot(t, out, line)
		checkInstalled(t, root, st, commit, map[string][]byte{
			"usr/share/zsh/vendor-completions/_retval": nil,
			"usr/share/doc/retval/copyright":           license,
			"usr/share/doc/retval/" + noticesName:      nil,
		})
	})
	t.Run("rpm", func(t *testing.T) {
		line := installdoc.Command(t, "sudo rpm -i retval-VERSION-1.x86_64.rpm", testVersion)
		root := installAsRoot(t, out, line)
		checkInstalled(t, root, st, commit, map[string][]byte{
			"usr/share/zsh/site-functions/_retval":     nil,
			"usr/share/licenses/retval/LICENSE":        license,
			"usr/share/licenses/retval/" + noticesName: nil,
		})
		rpm := filepath.Join(out, "retval-"+testVersion+"-1.x86_64.rpm")
		if b, err := exec.Command(needTool(t, "rpm"), "-qp", "--qf", "%{LICENSE}", rpm).CombinedOutput(); err != nil || string(b) != "MIT" {
			t.Errorf("rpm -qp --qf %%{LICENSE}: %q, %v; want MIT", b, err)
		}
	})
}

// runGit runs git in dir ("" for here) and returns its output.
func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	cmd := exec.Command("git", args...)
	// Commits made here are the same wherever and whenever they are made.
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=retval", "GIT_AUTHOR_EMAIL=retval@invalid",
		"GIT_COMMITTER_NAME=retval", "GIT_COMMITTER_EMAIL=retval@invalid", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// releaseClone clones the checkout at dir, without its tags, and tags its
// HEAD with tag. A tree with uncommitted changes is committed in the
// clone first: the release of what is being tested, not of what was last
// committed.
func releaseClone(t *testing.T, dir, tag string) string {
	t.Helper()
	clone := filepath.Join(t.TempDir(), "retval")
	runGit(t, "", "clone", "--quiet", "--no-tags", dir, clone)
	head := headCommit(t, dir)
	runGit(t, clone, "checkout", "--quiet", "--detach", head)
	if strings.TrimSpace(runGit(t, dir, "status", "--porcelain")) != "" {
		for _, f := range strings.Split(strings.TrimSuffix(runGit(t, dir, "ls-files", "-z", "--deleted"), "\x00"), "\x00") {
			if f != "" {
				os.Remove(filepath.Join(clone, f))
			}
		}
		for _, f := range strings.Split(strings.TrimSuffix(runGit(t, dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard"), "\x00"), "\x00") {
			copyFile(t, filepath.Join(dir, f), filepath.Join(clone, f))
		}
		runGit(t, clone, "add", "-A")
		runGit(t, clone, "-c", "commit.gpgsign=false", "commit", "--quiet", "--allow-empty", "--no-verify", "-m", "the tested tree")
	}
	runGit(t, clone, "tag", tag)
	return clone
}

// copyFile copies the file (or symbolic link) src to dst, making dst's
// directory; a src that is gone (deleted, not yet committed) is skipped.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	fi, err := os.Lstat(src)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Remove(dst)
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(src)
		if err == nil {
			err = os.Symlink(target, dst)
		}
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, fi.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
}

// archiveLine runs the README's line for an archive where a user would
// have downloaded SHA256SUMS and the linux/amd64 archive, and runs what it
// unpacked.
func archiveLine(t *testing.T, out string, st stamp, commit string) {
	line := installdoc.Command(t, "sha256sum --ignore-missing -c SHA256SUMS && tar -xzf retval_VERSION_linux_amd64.tar.gz", testVersion)
	dl := t.TempDir()
	archive := archiveRoot(target{"linux", "amd64"}, st) + ".tar.gz"
	for _, name := range []string{sumsName, archive} {
		copyFile(t, filepath.Join(out, name), filepath.Join(dl, name))
	}
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = dl
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, b)
	}
	checkVersion(t, filepath.Join(dl, archiveRoot(target{"linux", "amd64"}, st), "bin", "retval"), st.version, commit)
}

// installScript runs in a mount namespace as root: it lays an overlay
// over /usr and /var, whose changes go to $ROOT/usr and $ROOT/var, runs
// the install line in the directory holding the packages, and then what a
// user would: retval --version, man -w retval-peek, man retval (each
// one's output in $ROOT/out).
const installScript = `set -e
for d in usr var; do
  mkdir -p "$ROOT/$d" "$ROOT/work/$d"
  mount -t overlay overlay -o "lowerdir=/$d,upperdir=$ROOT/$d,workdir=$ROOT/work/$d" "/$d"
done
mkdir -p "$ROOT/out"
cd "$DOWNLOADS"
sh -c "$LINE" >"$ROOT/out/install" 2>&1 || { cat "$ROOT/out/install"; exit 1; }
unset MANPATH
/usr/bin/retval --version >"$ROOT/out/version" 2>&1
man -w retval-peek >"$ROOT/out/man-w" 2>&1
MANPAGER=cat MANWIDTH=80 LC_ALL=C man retval >"$ROOT/out/man" 2>&1
`

// installAsRoot runs an install line of the README ("sudo …") as root,
// with out as the download directory, over this system seen through
// overlays (installScript) in a mount namespace that has no network:
// nothing of the system changes. It returns the directory holding the
// overlays' changes (usr/, var/) and what the commands after it printed
// (out/).
func installAsRoot(t *testing.T, out, line string) string {
	t.Helper()
	cmdline, ok := strings.CutPrefix(line, "sudo ")
	if !ok {
		t.Fatalf("%q: an install line for a package starts with sudo", line)
	}
	unshare := []string{needTool(t, "unshare"), "--mount", "--net"}
	if os.Getuid() != 0 {
		unshare = append(unshare, "--map-root-user")
	}
	if err := exec.Command(unshare[0], append(unshare[1:], "true")...).Run(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s true: %v (the test needs a mount namespace: run as root or allow user namespaces)", strings.Join(unshare, " "), err)
		}
		t.Skipf("%s true: %v", strings.Join(unshare, " "), err)
	}
	root := t.TempDir()
	// overlayfs leaves its work directories unreadable, which t.TempDir's
	// removal (run after this) could not remove as another user than root.
	t.Cleanup(func() {
		filepath.WalkDir(filepath.Join(root, "work"), func(p string, d fs.DirEntry, err error) error {
			os.Chmod(p, 0o755)
			return nil
		})
	})
	cmd := exec.Command(unshare[0], append(unshare[1:], "sh", "-c", installScript)...)
	cmd.Env = append(os.Environ(), "ROOT="+root, "DOWNLOADS="+out, "LINE="+cmdline,
		// rpm keeps its database in ~/.rpmdb where the system has none (Debian's).
		"HOME="+t.TempDir())
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s (as root, over an overlay of /usr and /var): %v\n%s", cmdline, err, b)
	}
	return root
}

// checkInstalled checks what an install left in root (installAsRoot):
// every file of the package in its place under /usr, the binary naming
// the commit, man finding and rendering the page; extra are further
// files, with their bytes where not nil.
func checkInstalled(t *testing.T, root string, st stamp, commit string, extra map[string][]byte) {
	t.Helper()
	files := map[string][]byte{
		"usr/bin/retval":                                  nil,
		"usr/share/man/man1/retval.1.gz":                  nil,
		"usr/share/man/man1/retval-peek.1.gz":             nil,
		"usr/share/bash-completion/completions/retval":    nil,
		"usr/share/fish/vendor_completions.d/retval.fish": nil,
		"usr/share/doc/retval/README.md":                  nil,
	}
	maps.Copy(files, extra)
	for f, want := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Errorf("not installed: %v", err)
		} else if want != nil && !bytes.Equal(b, want) {
			t.Errorf("/%s is not the checkout's (%d bytes)", f, len(b))
		}
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(root, "out", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got, want := read("version"), "retval version "+st.version+" (commit "+commit; !strings.HasPrefix(got, want) {
		t.Errorf("/usr/bin/retval --version = %q, want it to start %q", got, want)
	}
	if got := strings.TrimSpace(read("man-w")); got != "/usr/share/man/man1/retval-peek.1.gz" {
		t.Errorf("man -w retval-peek: %q, want /usr/share/man/man1/retval-peek.1.gz", got)
	}
	if got := read("man"); !strings.Contains(got, "keep big tool results out of an LLM agent") {
		t.Errorf("man retval:\n%s", got)
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

// archiveFiles is what every archive holds besides the binary, by name:
// README, LICENSE and each man page with their bytes in the checkout, and
// the three completions (nil: the binary prints them).
func archiveFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	want := map[string][]byte{bashCompletion: nil, fishCompletion: nil, zshCompletion: nil, noticesName: nil}
	pages, _ := filepath.Glob(filepath.Join(dir, "docs", "man", "*.1"))
	if len(pages) < 2 {
		t.Fatalf("docs/man holds %d pages", len(pages))
	}
	for _, p := range append([]string{filepath.Join(dir, "README.md"), filepath.Join(dir, "LICENSE")}, pages...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(p)
		if strings.HasSuffix(name, ".1") {
			name = "share/man/man1/" + name
		}
		want[name] = b
	}
	return want
}

// checkArchive lists an archive: everything under one directory named
// after it, the binary executable, the files of archiveFiles with the
// checkout's bytes.
func checkArchive(t *testing.T, file, root string, tg target, docs map[string][]byte) {
	t.Helper()
	bin := "bin/" + tg.binName()
	want := []string{bin}
	for name := range docs {
		want = append(want, name)
	}
	slices.Sort(want)
	var got []string
	forEachFile(t, file, func(name string, mode os.FileMode, r io.Reader) {
		rel, ok := strings.CutPrefix(name, root+"/")
		if !ok {
			t.Errorf("%s: %s is outside %s/", filepath.Base(file), name, root)
			return
		}
		if rel == bin && mode&0o111 == 0 {
			t.Errorf("%s: %s is not executable (%v)", filepath.Base(file), name, mode)
		}
		if wantData := docs[rel]; wantData != nil {
			if b, err := io.ReadAll(r); err != nil || !bytes.Equal(b, wantData) {
				t.Errorf("%s: %s is not the checkout's (%d bytes, %v)", filepath.Base(file), name, len(b), err)
			}
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
