package local

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/retval/retval/internal/flock"
	"github.com/retval/retval/internal/fsx"
	"github.com/retval/retval/pkg/retain/internal/format"
)

// RunIDs lists the run directories; a symlink with a run's name is
// listed too (RunIDs).
func (b *Backend) RunIDs() ([]format.ID, error) {
	s := b
	ents, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, format.Errorf(format.CodeIO, "runs-dir %s does not exist (check --runs-dir or RETVAL_RUNS_DIR)", s.dir)
	}
	if err != nil {
		return nil, err
	}
	var out []format.ID
	for _, e := range ents {
		if !e.IsDir() && e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		if id, ok := format.RunFromDirName(e.Name()); ok {
			out = append(out, id)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

func (b *Backend) ScanRunEntries(run format.ID) (*format.RunInfo, error) {
	s := b
	dir, err := s.lookupRun(run)
	if err != nil {
		return nil, err
	}
	dfi, err := os.Lstat(dir)
	if err != nil {
		return nil, err
	}
	ri := &format.RunInfo{Run: run, Dir: dir, Bytes: dfi.Size(), DirModTime: dfi.ModTime()}
	ents, err := readDirInfo(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, s.missingRun(run)
	}
	if err != nil {
		return nil, err
	}
	descs := map[format.ID]bool{}
	for _, fi := range ents {
		if id, ok := strings.CutSuffix(fi.Name(), format.MetaExt); ok && format.IsClean(id) && fi.Mode().IsRegular() {
			descs[format.ID(id)] = true
		}
	}
	content := map[format.ID]int{} // content files seen per value
	for _, fi := range ents {
		name := fi.Name()
		e := format.RunEntry{Name: name, Bytes: fi.Size(), ModTime: fi.ModTime(), IsDir: fi.IsDir()}
		switch {
		case name == format.LockName || name == format.ActivityName:
			e.Kind = format.KindOwn
		case name == format.ReadsName:
			// The read log; one that is not a regular file is not retval's.
			e.Kind = format.KindOwn
			if !fi.Mode().IsRegular() {
				e.Kind = format.KindStray
			}
		case name == format.StepsDirName && fi.IsDir():
			e.Kind = format.KindOwn
			ri.StepsModTime = fi.ModTime()
			steps, err := readDirInfo(filepath.Join(dir, name))
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
			for _, sfi := range steps {
				se := format.RunEntry{Name: name + "/" + sfi.Name(), Kind: format.KindOwn, Bytes: sfi.Size(), ModTime: sfi.ModTime(), IsDir: sfi.IsDir()}
				if format.IsTemp(sfi.Name()) {
					se.Kind = format.KindTemp
				} else if sfi.IsDir() || !sfi.Mode().IsRegular() {
					se.Kind = format.KindStray
				}
				if err := treeSize(filepath.Join(dir, se.Name), &se); err != nil {
					return nil, err
				}
				ri.Entries = append(ri.Entries, se)
			}
		case format.IsTemp(name):
			e.Kind = format.KindTemp
		default:
			e.Kind = format.KindStray
			if _, ok := format.ValueOf(name); ok {
				e.Special = fi.Mode().Type() & (fs.ModeNamedPipe | fs.ModeDevice | fs.ModeCharDevice | fs.ModeSocket)
			}
			if id, ok := format.ValueOf(name); ok && fi.Mode().IsRegular() {
				format.ClassifyValueFile(&e, id, descs, content)
			}
		}
		if e.IsDir && e.Name != format.StepsDirName {
			if err := treeSize(filepath.Join(dir, name), &e); err != nil {
				return nil, err
			}
		}
		ri.Entries = append(ri.Entries, e)
	}
	for id, n := range content {
		if n < 2 || !descs[id] {
			continue
		}
		d, _ := committedValue(dir, id)
		if d == nil {
			continue // a descriptor that does not read: verify reports it; keep both meanwhile
		}
		format.OrphanOtherContent(ri, id, d)
	}
	for _, e := range ri.Entries {
		ri.Bytes += e.Bytes
		if !e.IsDir && e.ModTime.After(ri.LastActivity) {
			ri.LastActivity = e.ModTime
		}
	}
	if ri.LastActivity.IsZero() {
		ri.LastActivity = dfi.ModTime()
	}
	sort.Slice(ri.Entries, func(i, j int) bool { return ri.Entries[i].Name < ri.Entries[j].Name })
	for i := range ri.Entries {
		ri.Entries[i].Path = filepath.Join(filepath.Base(dir), ri.Entries[i].Name)
	}
	return ri, nil
}

// readDirInfo lists dir with each entry's lstat information.
func readDirInfo(dir string) ([]fs.FileInfo, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([]fs.FileInfo, 0, len(ents))
	for _, e := range ents {
		fi, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed while we listed
		}
		if err != nil {
			return nil, err
		}
		out = append(out, fi)
	}
	return out, nil
}

// treeSize adds the apparent size and newest time of the tree under a
// directory entry to e (whose own size and time are already in it).
func treeSize(path string, e *format.RunEntry) error {
	if !e.IsDir {
		return nil
	}
	return filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if p == path {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		e.Bytes += fi.Size()
		if fi.ModTime().After(e.ModTime) {
			e.ModTime = fi.ModTime()
		}
		return nil
	})
}

func (b *Backend) RunBusy(run format.ID) (bool, error) {
	s := b
	f, err := openRunLock(run, s.runDir(run), os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	err = flock.TryExclusive(f)
	if errors.Is(err, flock.ErrBusy) {
		return true, nil
	}
	return false, err
}

func (b *Backend) RunsDirMissing() (bool, error) {
	s := b
	root, err := fsx.OpenRoot(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, s.runsDirErr(err)
	}
	root.Close()
	return false, nil
}
