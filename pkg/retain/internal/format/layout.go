package format

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/retval/retval/internal/fsx"
)

// The on-disk names of SPEC §1. Only the store and its backends use them
// (this package is internal): every other package works on the store
// through its operations (Retain, Values, ScanRun, Collection,
// OpenStepLedger, ...), never by building a path.
const (
	RunSuffix     = ".values"
	contentExt    = ".txt"
	zstdExt       = ".txt.zst"
	MetaExt       = ".meta.json"
	linesExt      = ".lines"
	LockName      = ".lock"
	ActivityName  = ".activity"
	StepsDirName  = ".steps"
	StoreDirName  = ".retval"
	TombstoneDir  = "tombstones"
	TmpPrefix     = ".tmp-"
	DirMode       = 0o700
	FileMode      = 0o600
	ActivityEvery = time.Hour
)

// RunDir is the directory of run in the runs-dir dir.
func RunDir(dir string, run ID) string { return filepath.Join(dir, string(run)+RunSuffix) }

// RunFromDirName returns the run id of a directory entry of the runs-dir, or
// false when the entry is not a run directory.
func RunFromDirName(name string) (ID, bool) {
	r, ok := strings.CutSuffix(name, RunSuffix)
	if !ok || !IsClean(r) {
		return "", false
	}
	return ID(r), true
}

// ContentName is the file name of a value's bytes.
func ContentName(id ID, c Compression) string {
	if c == CompressZstd {
		return string(id) + zstdExt
	}
	return string(id) + contentExt
}

// MetaName is the file name of a value's descriptor.
func MetaName(id ID) string { return string(id) + MetaExt }

// LinesName is the file name of a value's line and block index.
func LinesName(id ID) string { return string(id) + linesExt }

// IsTemp reports whether a file name is a writer's temporary file.
func IsTemp(name string) bool { return strings.HasPrefix(name, TmpPrefix) }

// ValueOf tells which value a run directory entry belongs to, if any:
// content, descriptor or index of id.
func ValueOf(name string) (ID, bool) {
	for _, ext := range []string{MetaExt, zstdExt, contentExt, linesExt} {
		if r, ok := strings.CutSuffix(name, ext); ok && IsClean(r) {
			return ID(r), true
		}
	}
	return "", false
}

// CollectedError is the error of a lookup in the run t says gc collected.
func CollectedError(t *Tombstone) error {
	return &Error{Code: CodeCollected, Err: fmt.Errorf("run %q was collected by gc at %s", t.Run, t.Collected.UTC().Format(time.RFC3339))}
}

// UnknownRunError is the error of a run the store does not hold. It is
// the Err of an *Error with CodeUnknownReference.
type UnknownRunError struct {
	Run ID
	Dir string // the runs-dir looked in
	// Typed is the run id as given, when it is not Run itself (an id the
	// sanitizer changed, such as "../x"): the message names both.
	Typed string
}

func (e *UnknownRunError) Error() string {
	if e.Typed != "" && e.Typed != string(e.Run) {
		return fmt.Sprintf("no run %q (stored as %q) in %s", e.Typed, e.Run, e.Dir)
	}
	return fmt.Sprintf("no run %q in %s", e.Run, e.Dir)
}

// AsTyped makes an unknown run's error name the run as it was given.
func AsTyped(err error, typed string) error {
	var ur *UnknownRunError
	if !errors.As(err, &ur) || typed == string(ur.Run) {
		return err
	}
	named := *ur
	named.Typed = typed
	return &Error{Code: CodeOf(err), Err: &named}
}

// CreateTemp makes an O_EXCL temporary file in dir whose name marks it as a
// writer's (isTemp), so gc can tell it from committed files.
func CreateTemp(dir, pattern string) (*os.File, error) {
	f, err := fsx.CreateTemp(dir, TmpPrefix+pattern)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(FileMode); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}
