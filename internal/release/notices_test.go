package main

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// checkNotices checks that notices carries the Go standard library's
// licence and a licence of every module bin links, each under its line.
func checkNotices(t *testing.T, notices []byte, bin string) {
	t.Helper()
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	stdlib, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(goroot)), "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(notices, []byte("==== Go standard library "+bi.GoVersion+": LICENSE ====\n\n"+string(stdlib))) {
		t.Errorf("%s lacks the Go standard library's LICENSE", noticesName)
	}
	if len(bi.Deps) < 5 {
		t.Fatalf("%s links %d modules", bin, len(bi.Deps))
	}
	for _, d := range bi.Deps {
		if !bytes.Contains(notices, []byte("\n==== "+d.Path+" "+d.Version+": ")) {
			t.Errorf("%s has no licence of %s %s, which the binary links", noticesName, d.Path, d.Version)
		}
	}
}

// TestThirdPartyNotices builds retval and checks what its archive's
// THIRD_PARTY_LICENSES would say of it; a module without a licence file
// stops the release.
func TestThirdPartyNotices(t *testing.T) {
	if testing.Short() {
		t.Skip("builds retval")
	}
	dir := checkout(t)
	bin := filepath.Join(t.TempDir(), "retval")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	notices, err := thirdPartyNotices(context.Background(), dir, []string{bin})
	if err != nil {
		t.Fatal(err)
	}
	checkNotices(t, notices, bin)
	if !bytes.Contains(notices, []byte("==== golang.org/x/sys ")) || !bytes.Contains(notices, []byte(": PATENTS ====")) {
		t.Errorf("golang.org/x/sys's LICENSE and PATENTS are not both there")
	}

	var out bytes.Buffer
	if err := appendLicences(&out, "m v1", t.TempDir()); err == nil || !strings.Contains(err.Error(), "m v1 has no licence file") {
		t.Errorf("a module without a licence: %v", err)
	}
}
