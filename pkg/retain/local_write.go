package retain

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/retval/retval/internal/flock"
	"github.com/retval/retval/internal/fsx"
)

// localWrite is a retain into a runs-dir: the run directory, made if
// needed, with its lock held shared until the retain is done, and the
// content streamed to a temporary file in it.
type localWrite struct {
	b    *localBackend
	dir  string
	id   ID
	lock *RunLock
	prev *Descriptor
}

// beginWrite creates the run directory if needed and takes its lock
// shared.
func (b *localBackend) beginWrite(run, id ID) (valueWrite, error) {
	l, err := b.s.lockRun(run, true)
	if err != nil {
		return nil, err
	}
	lw := &localWrite{b: b, dir: l.Dir, id: id, lock: l}
	if old, err := readDescriptor(filepath.Join(lw.dir, metaName(id))); err == nil {
		lw.prev = old
	}
	return lw, nil
}

func (lw *localWrite) old() *Descriptor { return lw.prev }

func (lw *localWrite) close() { lw.lock.Unlock() }

// spool creates the content's temporary file in the run directory,
// written out as it goes (the commit renames it into place).
func (lw *localWrite) spool() (*os.File, func(f *os.File, off, n int64), error) {
	tmp, err := createTemp(lw.dir, string(lw.id)+"-")
	return tmp, fsx.StartWriteback, err
}

// commit makes the value exist: content, index, descriptor, each synced and
// renamed into place, under the run directory's exclusive flock so that the
// conflict and capacity checks and the renames are one step for writers.
func (lw *localWrite) commit(w *writer, d *Descriptor, stored int64, in io.Reader) (*Result, error) {
	var index *os.File
	if w.st.size > IndexMinSize {
		f, err := lw.writeIndex(w)
		if err != nil {
			return w.fallbackAfterWrite(nil, in, err)
		}
		index = f
		defer func() {
			index.Close()
			os.Remove(index.Name()) // a no-op once renamed away
		}()
	}

	dirf, err := os.Open(lw.dir)
	if err != nil {
		return w.fallbackAfterWrite(nil, in, err)
	}
	defer dirf.Close()
	if err := flock.Exclusive(dirf); err != nil {
		return w.fallbackAfterWrite(nil, in, err)
	}
	defer flock.Unlock(dirf)

	contentPath := filepath.Join(lw.dir, contentName(w.id, w.comp))
	metaPath := filepath.Join(lw.dir, metaName(w.id))
	// The same value again comes before every limit: it is a no-op.
	if old, err := readDescriptor(metaPath); err == nil {
		if old.SHA256 != d.SHA256 || old.Size != d.Size {
			return nil, w.conflict(old)
		}
		return lw.again(w, old, stored, index, in)
	} else if !errors.Is(err, fs.ErrNotExist) {
		// A damaged descriptor: the model still gets the output.
		return w.fallbackAfterWrite(nil, in, err)
	}
	if w.lim.MaxValueSize > 0 && d.Size > w.lim.MaxValueSize {
		return w.atCapacity(d, fmt.Sprintf("%d bytes exceed max-value-size %d", d.Size, w.lim.MaxValueSize))
	}

	if reason, err := lw.capacity(w, d); err != nil {
		return w.fallbackAfterWrite(nil, in, err)
	} else if reason != "" {
		return w.atCapacity(d, reason)
	}

	d.Created = w.store.now().UTC().Truncate(1e9)
	d.StoredBytes = stored
	body, err := marshalDescriptor(d)
	if err != nil {
		return nil, err
	}
	undo := func(err error) (*Result, error) {
		os.Remove(metaPath)
		os.Remove(contentPath)
		os.Remove(filepath.Join(lw.dir, linesName(w.id)))
		return w.fallbackAfterWrite(nil, in, err)
	}
	if err := os.Rename(w.sink.File().Name(), contentPath); err != nil {
		return undo(err)
	}
	if index != nil {
		if err := os.Rename(index.Name(), filepath.Join(lw.dir, linesName(w.id))); err != nil {
			return undo(err)
		}
	}
	if err := WriteFileAtomic(metaPath, body, fileMode); err != nil {
		return undo(err)
	}
	// The content file is now the value's; keep its descriptor but stop
	// treating it as ours to remove.
	w.sink.File().Close()
	w.sink = nil
	return &Result{Retained: true, Descriptor: d, Stub: w.retainedStub(d)}, nil
}

// again handles a retain of the bytes the call already holds. It is a
// no-op when the stored value verifies (size and SHA-256, as any read
// checks); when its content or index was lost or damaged it is restored
// from this input — which has the same digest — by the same synced
// renames as a first commit. A stub is printed only for a value that
// verifies; otherwise the input goes out verbatim. The caller holds the
// run directory's exclusive flock.
func (lw *localWrite) again(w *writer, old *Descriptor, stored int64, index *os.File, in io.Reader) (*Result, error) {
	var n int64
	probs := lw.verify(w, old, &n)
	if len(probs) > 0 {
		if err := lw.restore(w, old, stored, index, probs); err != nil {
			return w.fallbackAfterWrite(nil, in, fmt.Errorf("value %q of run %q is damaged and could not be restored: %w (run retval verify; retain under a new call id)", w.id, w.runID, err))
		}
		if probs := lw.verify(w, old, &n); len(probs) > 0 {
			return w.fallbackAfterWrite(nil, in, fmt.Errorf("value %q of run %q is still damaged after restoring it: %s (run retval verify)", w.id, w.runID, probs[0].Message))
		}
		if d, err := readDescriptor(filepath.Join(lw.dir, metaName(w.id))); err == nil {
			old = d
		}
	}
	w.store.touchNow(filepath.Join(lw.dir, activityName), w.store.now())
	// This retain's bytes are the value's, so its head and tail serve.
	return &Result{Retained: true, Descriptor: old, Stub: w.retainedStub(old)}, nil
}

// restore puts this retain's content and index in place of the damaged
// ones of old. Content stored in another representation than old's gets a
// descriptor naming the new one (written last, the commit point), then
// the old file is removed.
func (lw *localWrite) restore(w *writer, old *Descriptor, stored int64, index *os.File, probs []Problem) error {
	bad := map[string]bool{}
	for _, p := range probs {
		bad[p.File] = true
	}
	oldContent := contentName(w.id, old.Compression)
	contentBad := bad[oldContent] || bad[metaName(w.id)]
	if contentBad {
		// The sink stays open: should the value still not verify, the
		// input is read back from it. Its temporary name is gone, so
		// dropping it removes nothing.
		if err := os.Rename(w.sink.File().Name(), filepath.Join(lw.dir, contentName(w.id, w.comp))); err != nil {
			return err
		}
		if _, body, changed, err := w.restoredDescriptor(old, stored); err != nil {
			return err
		} else if changed {
			if err := WriteFileAtomic(filepath.Join(lw.dir, metaName(w.id)), body, fileMode); err != nil {
				if w.comp != old.Compression {
					// The new representation's file names no value: no debris.
					os.Remove(filepath.Join(lw.dir, contentName(w.id, w.comp)))
				}
				return err
			}
			if w.comp != old.Compression {
				os.Remove(filepath.Join(lw.dir, oldContent))
			}
		}
	}
	lines := filepath.Join(lw.dir, linesName(w.id))
	// verify stops at bad content before it looks at the index, so new
	// content gets this retain's index too.
	if _, err := os.Lstat(lines); index != nil && (contentBad || bad[linesName(w.id)] || err != nil) {
		if err := os.Rename(index.Name(), lines); err != nil {
			return err
		}
	}
	return syncDir(lw.dir)
}

func (lw *localWrite) writeIndex(w *writer) (*os.File, error) {
	f, err := createTemp(lw.dir, string(w.id)+"-lines-")
	if err != nil {
		return nil, err
	}
	sum := w.st.sha.Sum(nil)
	_, err = f.Write(w.st.index.finish(sum))
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

// capacity returns why the run cannot take d, or "".
func (lw *localWrite) capacity(w *writer, d *Descriptor) (string, error) {
	L := w.lim
	if L.MaxRunValues == 0 && L.MaxRunBytes == 0 {
		return "", nil
	}
	ents, err := os.ReadDir(lw.dir)
	if err != nil {
		return "", err
	}
	var n, total int64
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), metaExt)
		if !ok || !IsClean(id) {
			continue
		}
		old, prob := committedValue(lw.dir, ID(id))
		if prob != nil {
			continue // not a committed value: counts for nothing
		}
		n++
		total += old.Size
	}
	return w.full(d, n, total), nil
}

// verify checks the value the call holds, as verify does.
func (lw *localWrite) verify(w *writer, old *Descriptor, n *int64) []Problem {
	committed := func(id ID) (*Descriptor, *valueProblem) { return committedValue(lw.dir, id) }
	return verifyValue(lw.b, committed, w.runID, w.id, old.Size > IndexMinSize, n)
}
