package retain

import (
	"errors"
	"fmt"
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
	l, err := b.lockRun(run, true)
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
func (lw *localWrite) commit(c *commitReq) commitResult {
	d, stored := c.d, c.stored
	var index *os.File
	if c.index != nil {
		f, err := lw.writeIndex(c)
		if err != nil {
			return commitResult{failed: err}
		}
		index = f
		defer func() {
			index.Close()
			os.Remove(index.Name()) // a no-op once renamed away
		}()
	}

	dirf, err := os.Open(lw.dir)
	if err != nil {
		return commitResult{failed: err}
	}
	defer dirf.Close()
	if err := flock.Exclusive(dirf); err != nil {
		return commitResult{failed: err}
	}
	defer flock.Unlock(dirf)

	contentPath := filepath.Join(lw.dir, contentName(c.id, c.comp))
	metaPath := filepath.Join(lw.dir, metaName(c.id))
	// The same value again comes before every limit: it is a no-op.
	if old, err := readDescriptor(metaPath); err == nil {
		if old.SHA256 != d.SHA256 || old.Size != d.Size {
			return commitResult{conflict: old}
		}
		return lw.again(c, old, index)
	} else if !errors.Is(err, fs.ErrNotExist) {
		// A damaged descriptor: the model still gets the output.
		return commitResult{failed: err}
	}
	if c.lim.MaxValueSize > 0 && d.Size > c.lim.MaxValueSize {
		return commitResult{full: fmt.Sprintf("%d bytes exceed max-value-size %d", d.Size, c.lim.MaxValueSize)}
	}

	if reason, err := lw.capacity(c, d); err != nil {
		return commitResult{failed: err}
	} else if reason != "" {
		return commitResult{full: reason}
	}

	d.Created = c.now().UTC().Truncate(1e9)
	d.StoredBytes = stored
	body, err := marshalDescriptor(d)
	if err != nil {
		return commitResult{err: err}
	}
	undo := func(err error) commitResult {
		os.Remove(metaPath)
		os.Remove(contentPath)
		os.Remove(filepath.Join(lw.dir, linesName(c.id)))
		return commitResult{failed: err}
	}
	if err := os.Rename(c.content.Name(), contentPath); err != nil {
		return undo(err)
	}
	if index != nil {
		if err := os.Rename(index.Name(), filepath.Join(lw.dir, linesName(c.id))); err != nil {
			return undo(err)
		}
	}
	if err := WriteFileAtomic(metaPath, body, fileMode); err != nil {
		return undo(err)
	}
	// The content file is now the value's; keep its descriptor but stop
	// treating it as ours to remove.
	return commitResult{value: d, taken: true}
}

// again handles a retain of the bytes the call already holds. It is a
// no-op when the stored value verifies (size and SHA-256, as any read
// checks); when its content or index was lost or damaged it is restored
// from this input — which has the same digest — by the same synced
// renames as a first commit. A stub is printed only for a value that
// verifies; otherwise the input goes out verbatim. The caller holds the
// run directory's exclusive flock.
func (lw *localWrite) again(c *commitReq, old *Descriptor, index *os.File) commitResult {
	var n int64
	probs := lw.verify(c, old, &n)
	if len(probs) > 0 {
		if err := lw.restore(c, old, index, probs); err != nil {
			return commitResult{failed: fmt.Errorf("value %q of run %q is damaged and could not be restored: %w (run retval verify; retain under a new call id)", c.id, c.run, err)}
		}
		if probs := lw.verify(c, old, &n); len(probs) > 0 {
			return commitResult{failed: fmt.Errorf("value %q of run %q is still damaged after restoring it: %s (run retval verify)", c.id, c.run, probs[0].Message)}
		}
		if d, err := readDescriptor(filepath.Join(lw.dir, metaName(c.id))); err == nil {
			old = d
		}
	}
	lw.b.touchNow(filepath.Join(lw.dir, activityName), c.now())
	// This retain's bytes are the value's, so its head and tail serve.
	return commitResult{value: old}
}

// restore puts this retain's content and index in place of the damaged
// ones of old. Content stored in another representation than old's gets a
// descriptor naming the new one (written last, the commit point), then
// the old file is removed.
func (lw *localWrite) restore(c *commitReq, old *Descriptor, index *os.File, probs []Problem) error {
	bad := map[string]bool{}
	for _, p := range probs {
		bad[p.File] = true
	}
	oldContent := contentName(c.id, old.Compression)
	contentBad := bad[oldContent] || bad[metaName(c.id)]
	if contentBad {
		// The sink stays open: should the value still not verify, the
		// input is read back from it. Its temporary name is gone, so
		// dropping it removes nothing.
		if err := os.Rename(c.content.Name(), filepath.Join(lw.dir, contentName(c.id, c.comp))); err != nil {
			return err
		}
		if _, body, changed, err := c.restoredDescriptor(old); err != nil {
			return err
		} else if changed {
			if err := WriteFileAtomic(filepath.Join(lw.dir, metaName(c.id)), body, fileMode); err != nil {
				if c.comp != old.Compression {
					// The new representation's file names no value: no debris.
					os.Remove(filepath.Join(lw.dir, contentName(c.id, c.comp)))
				}
				return err
			}
			if c.comp != old.Compression {
				os.Remove(filepath.Join(lw.dir, oldContent))
			}
		}
	}
	lines := filepath.Join(lw.dir, linesName(c.id))
	// verify stops at bad content before it looks at the index, so new
	// content gets this retain's index too.
	if _, err := os.Lstat(lines); index != nil && (contentBad || bad[linesName(c.id)] || err != nil) {
		if err := os.Rename(index.Name(), lines); err != nil {
			return err
		}
	}
	return syncDir(lw.dir)
}

func (lw *localWrite) writeIndex(c *commitReq) (*os.File, error) {
	f, err := createTemp(lw.dir, string(c.id)+"-lines-")
	if err != nil {
		return nil, err
	}
	_, err = f.Write(c.index)
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
func (lw *localWrite) capacity(c *commitReq, d *Descriptor) (string, error) {
	L := c.lim
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
	return c.full(n, total), nil
}

// verify checks the value the call holds, as verify does.
func (lw *localWrite) verify(c *commitReq, old *Descriptor, n *int64) []Problem {
	committed := func(id ID) (*Descriptor, *valueProblem) { return committedValue(lw.dir, id) }
	return verifyValue(lw.b, committed, c.run, c.id, old.Size > IndexMinSize, n)
}
