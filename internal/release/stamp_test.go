package main

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadStamp: what a build is named after, from a scratch repository:
// the tag at HEAD; without one, a refusal, or with -snapshot the go
// command's pseudo-version; uncommitted changes refused, or "+dirty"
// with -snapshot; two version tags refused.
func TestReadStamp(t *testing.T) {
	dir := t.TempDir()
	runGit(t, dir, "init", "--quiet")
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runGit(t, dir, "add", "f")
	runGit(t, dir, "-c", "commit.gpgsign=false", "commit", "--quiet", "-m", "one")
	commit := headCommit(t, dir)
	ctx := context.Background()

	if _, err := readStamp(ctx, dir, false); err == nil || !strings.Contains(err.Error(), "no version tag") {
		t.Errorf("untagged, not a snapshot: %v, want a refusal", err)
	}
	st, err := readStamp(ctx, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := "v0.0.0-" + st.time.Format("20060102150405") + "-" + commit[:12]; st.version != want || st.commit != commit || st.dirty {
		t.Errorf("untagged snapshot: %+v, want version %s at %s, clean", st, want, commit)
	}

	runGit(t, dir, "tag", "v1.2.3")
	runGit(t, dir, "tag", "not-a-version")
	if st, err := readStamp(ctx, dir, false); err != nil || st.version != "v1.2.3" || st.fileVersion() != "1.2.3" {
		t.Errorf("tagged: %+v, %v; want v1.2.3", st, err)
	}

	if err := os.WriteFile(filepath.Join(dir, "g"), []byte("untracked\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readStamp(ctx, dir, false); err == nil || !strings.Contains(err.Error(), "uncommitted changes") {
		t.Errorf("modified, not a snapshot: %v, want a refusal", err)
	}
	if st, err := readStamp(ctx, dir, true); err != nil || st.version != "v1.2.3+dirty" || !st.dirty {
		t.Errorf("modified snapshot: %+v, %v; want v1.2.3+dirty", st, err)
	}
	os.Remove(filepath.Join(dir, "g"))

	runGit(t, dir, "tag", "v1.2.4")
	if _, err := readStamp(ctx, dir, false); err == nil || !strings.Contains(err.Error(), "several version tags") {
		t.Errorf("two version tags: %v, want a refusal", err)
	}
}

// TestLicenseRequired: a checkout without LICENSE builds nothing, snapshot
// or not: every archive and package carries it.
func TestLicenseRequired(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# retval\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, snapshot := range []bool{false, true} {
		_, err := collectDocs(context.Background(), options{dir: dir, snapshot: snapshot}, "")
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "LICENSE") {
			t.Errorf("snapshot %v: %v, want LICENSE not found", snapshot, err)
		}
	}
}
