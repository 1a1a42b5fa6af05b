package ui

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// The page's own script never turns data into markup: no innerHTML,
// outerHTML, insertAdjacentHTML, document.write, eval or Function; it
// builds elements and sets textContent.
func TestScriptWritesNoMarkup(t *testing.T) {
	b, err := fs.ReadFile(assets, "assets/app.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "setAttribute('on", "javascript:"} {
		if strings.Contains(string(b), bad) {
			t.Errorf("app.js uses %s", bad)
		}
	}
}

// The page loads nothing from elsewhere: every script and stylesheet is
// one of its assets, and none holds inline code (the CSP forbids it).
func TestPageLoadsOnlyItsAssets(t *testing.T) {
	b, err := fs.ReadFile(assets, "assets/index.html")
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, m := range regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		ref := m[1]
		if strings.HasPrefix(ref, "#") {
			continue
		}
		if !strings.HasPrefix(ref, "/assets/") {
			t.Errorf("the page loads %s", ref)
			continue
		}
		if _, err := fs.Stat(assets, strings.TrimPrefix(ref, "/")); err != nil {
			t.Errorf("the page loads %s, which is not embedded", ref)
		}
	}
	if regexp.MustCompile(`<script>|<script [^>]*>[^<]|<style| style=| on[a-z]+=`).MatchString(page) {
		t.Error("the page holds inline script or style")
	}
}

// The vendored chart library is the pinned release, unchanged, with its
// licence beside it (see assets/vendor/uplot/README.md).
func TestVendoredChartLibrary(t *testing.T) {
	want := map[string]string{
		"uPlot.iife.min.js": "19c8d4c6ad88929a79f4ae49d6f7161566dfd0ba3d15cc495e974f787eb78f1f",
		"uPlot.min.css":     "df630c6a8d6f8eeaff264b50f73ce5b114f646ffd9a0bb74f049b0a00135fa04",
	}
	for name, sum := range want {
		b, err := fs.ReadFile(assets, "assets/vendor/uplot/"+name)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(b)
		if got := hex.EncodeToString(h[:]); got != sum {
			t.Errorf("%s: sha256 %s, want that of uplot@1.6.32, %s", name, got, sum)
		}
	}
	lic, err := fs.ReadFile(assets, "assets/vendor/uplot/LICENSE")
	if err != nil || !strings.Contains(string(lic), "MIT License") {
		t.Errorf("no MIT licence beside uPlot: %v", err)
	}
}

// Importing pkg/ui costs a retval process nothing at start-up: the
// package has no init work (no template parsed, no regexp compiled, no
// table built), as GODEBUG=inittrace=1 shows for the binary.
func TestNoInitWork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds retval")
	}
	bin := t.TempDir() + "/retval"
	build := exec.Command("go", "build", "-o", bin, "github.com/retval/retval")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	deps, err := exec.Command("go", "list", "-deps", "github.com/retval/retval").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(deps), "github.com/retval/retval/pkg/ui\n") {
		t.Fatal("the binary does not link pkg/ui: this test checks nothing")
	}
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("retval --version: %v\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "init github.com/retval/retval/pkg/ui ") {
			t.Errorf("pkg/ui does work at init: %s", l)
		}
	}
	if !strings.Contains(string(out), "init ") {
		t.Fatalf("no init trace:\n%s", out)
	}
}
