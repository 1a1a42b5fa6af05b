package local

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/retval/retval/internal/fsx"
	"github.com/retval/retval/pkg/retain/internal/backend"
	"github.com/retval/retval/pkg/retain/internal/format"
)

// localWrite is a retain into a runs-dir: the run directory, made if
// needed, with its lock held shared until the retain is done, and the
// content streamed to a temporary file in it.
type localWrite struct {
	b    *Backend
	dir  string
	id   format.ID
	lock *backend.RunLock
	prev *format.Descriptor
	// synced: the content file was synced (syncContent); index: the line
	// index's synced temporary file, once written (indexFile).
	synced bool
	index  *os.File
}

// BeginWrite creates the run directory if needed and takes its lock
// shared.
func (b *Backend) BeginWrite(run, id format.ID) (backend.ValueWrite, error) {
	l, err := b.lockRun(run, true)
	if err != nil {
		return nil, err
	}
	lw := &localWrite{b: b, dir: l.Dir, id: id, lock: l}
	if old, err := readDescriptor(filepath.Join(lw.dir, format.MetaName(id))); err == nil {
		lw.prev = old
	}
	return lw, nil
}

func (lw *localWrite) Old() *format.Descriptor { return lw.prev }

func (lw *localWrite) Close() { lw.lock.Unlock() }

// Spool creates the content's temporary file in the run directory,
// written out as it goes (the commit renames it into place).
func (lw *localWrite) Spool() (*os.File, func(f *os.File, off, n int64), error) {
	tmp, err := format.CreateTemp(lw.dir, string(lw.id)+"-")
	return tmp, fsx.StartWriteback, err
}

// Commit makes the value exist: content, index, descriptor, each synced and
// renamed into place, under the run directory's exclusive flock so that the
// conflict and capacity checks and the renames are one step for writers.
func (lw *localWrite) Commit(c *backend.CommitReq) backend.CommitResult {
	d, stored := c.Desc, c.Stored
	defer func() {
		if lw.index != nil {
			lw.index.Close()
			os.Remove(lw.index.Name()) // a no-op once renamed away
		}
	}()
	// Content and index are synced before the commit lock is taken, so
	// that retains into one run wait for the disk side by side — unless
	// the call held these very bytes when the retain began: they are then
	// most likely dropped (again), and synced only if they are renamed in.
	if p := lw.prev; p == nil || p.SHA256 != d.SHA256 || p.Size != d.Size {
		if err := lw.syncContent(c); err != nil {
			return backend.CommitResult{Failed: err}
		}
		if _, err := lw.indexFile(c); err != nil {
			return backend.CommitResult{Failed: err}
		}
	}

	unlock, err := lockCommit(lw.dir)
	if err != nil {
		return backend.CommitResult{Failed: err}
	}
	defer unlock()

	contentPath := filepath.Join(lw.dir, format.ContentName(c.ID, c.Comp))
	metaPath := filepath.Join(lw.dir, format.MetaName(c.ID))
	// The same value again comes before every limit: it is a no-op.
	if old, err := readDescriptor(metaPath); err == nil {
		if format.FoldedID(old.ID, c.ID) {
			return backend.CommitResult{Err: format.Errorf(format.CodeConflict, "call %q of run %q needs the files of value %q, which this file system does not tell apart (it ignores case, as NTFS and APFS do): use a call id that differs in more than case", c.ID, c.Run, old.ID)}
		}
		if old.SHA256 != d.SHA256 || old.Size != d.Size {
			return backend.CommitResult{Conflict: old}
		}
		return lw.again(c, old)
	} else if !errors.Is(err, fs.ErrNotExist) {
		// A damaged descriptor: the model still gets the output.
		return backend.CommitResult{Failed: err}
	}
	if c.Limits.MaxValueSize > 0 && d.Size > c.Limits.MaxValueSize {
		return backend.CommitResult{Full: fmt.Sprintf("%d bytes exceed max-value-size %d", d.Size, c.Limits.MaxValueSize)}
	}

	if reason, err := lw.capacity(c, d); err != nil {
		return backend.CommitResult{Failed: err}
	} else if reason != "" {
		return backend.CommitResult{Full: reason}
	}

	d.Created = c.Now().UTC().Truncate(1e9)
	d.StoredBytes = stored
	body, err := format.MarshalDescriptor(d)
	if err != nil {
		return backend.CommitResult{Err: err}
	}
	undo := func(err error) backend.CommitResult {
		os.Remove(metaPath)
		os.Remove(contentPath)
		os.Remove(filepath.Join(lw.dir, format.LinesName(c.ID)))
		return backend.CommitResult{Failed: err}
	}
	if err := lw.syncContent(c); err != nil {
		return backend.CommitResult{Failed: err}
	}
	index, err := lw.indexFile(c)
	if err != nil {
		return backend.CommitResult{Failed: err}
	}
	if err := os.Rename(c.Content.Name(), contentPath); err != nil {
		return undo(err)
	}
	if index != nil {
		if err := os.Rename(index.Name(), filepath.Join(lw.dir, format.LinesName(c.ID))); err != nil {
			return undo(err)
		}
	}
	// The content's entry must reach the disk before the descriptor's:
	// else a power loss may keep a descriptor whose content file is gone
	// (internal/crash, the weak model).
	if err := syncDir(lw.dir); err != nil {
		return undo(err)
	}
	if err := WriteFileAtomic(metaPath, body, format.FileMode); err != nil {
		return undo(err)
	}
	// The content file is now the value's; keep its descriptor but stop
	// treating it as ours to remove.
	return backend.CommitResult{Value: d, Taken: true}
}

// again handles a retain of the bytes the call already holds. It is a
// no-op when the stored value verifies (size and SHA-256, as any read
// checks); when its content or index was lost or damaged it is restored
// from this input — which has the same digest — by the same synced
// renames as a first commit. A stub is printed only for a value that
// verifies; otherwise the input goes out verbatim. The caller holds the
// run directory's exclusive flock.
func (lw *localWrite) again(c *backend.CommitReq, old *format.Descriptor) backend.CommitResult {
	probs := lw.verify(c, old)
	if len(probs) > 0 {
		if err := lw.restore(c, old, probs); err != nil {
			return backend.CommitResult{Failed: fmt.Errorf("value %q of run %q is damaged and could not be restored: %w (run retval verify; retain under a new call id)", c.ID, c.Run, err)}
		}
		if probs := lw.verify(c, old); len(probs) > 0 {
			return backend.CommitResult{Failed: fmt.Errorf("value %q of run %q is still damaged after restoring it: %s (run retval verify)", c.ID, c.Run, probs[0].Message)}
		}
		if d, err := readDescriptor(filepath.Join(lw.dir, format.MetaName(c.ID))); err == nil {
			old = d
		}
	}
	lw.b.touchNow(filepath.Join(lw.dir, format.ActivityName), c.Now())
	// This retain's bytes are the value's, so its head and tail serve.
	return backend.CommitResult{Value: old}
}

// restore puts this retain's content and index in place of the damaged
// ones of old. Content stored in another representation than old's gets a
// descriptor naming the new one (written last, the commit point), then
// the old file is removed.
func (lw *localWrite) restore(c *backend.CommitReq, old *format.Descriptor, probs []format.Problem) error {
	bad := map[string]bool{}
	for _, p := range probs {
		bad[p.File] = true
	}
	oldContent := format.ContentName(c.ID, old.Compression)
	contentBad := bad[oldContent] || bad[format.MetaName(c.ID)]
	if contentBad {
		// The sink stays open: should the value still not verify, the
		// input is read back from it. Its temporary name is gone, so
		// dropping it removes nothing.
		if err := lw.syncContent(c); err != nil {
			return err
		}
		if err := os.Rename(c.Content.Name(), filepath.Join(lw.dir, format.ContentName(c.ID, c.Comp))); err != nil {
			return err
		}
		if _, body, changed, err := c.RestoredDescriptor(old); err != nil {
			return err
		} else if changed {
			if err := WriteFileAtomic(filepath.Join(lw.dir, format.MetaName(c.ID)), body, format.FileMode); err != nil {
				if c.Comp != old.Compression {
					// The new representation's file names no value: no debris.
					os.Remove(filepath.Join(lw.dir, format.ContentName(c.ID, c.Comp)))
				}
				return err
			}
			if c.Comp != old.Compression {
				os.Remove(filepath.Join(lw.dir, oldContent))
			}
		}
	}
	lines := filepath.Join(lw.dir, format.LinesName(c.ID))
	// verify stops at bad content before it looks at the index, so new
	// content gets this retain's index too.
	if _, err := os.Lstat(lines); c.Index != nil && (contentBad || bad[format.LinesName(c.ID)] || err != nil) {
		index, err := lw.indexFile(c)
		if err != nil {
			return err
		}
		if err := os.Rename(index.Name(), lines); err != nil {
			return err
		}
	}
	return syncDir(lw.dir)
}

// syncContent syncs the content file, once: before it is renamed into
// place, its bytes must be on the disk.
func (lw *localWrite) syncContent(c *backend.CommitReq) error {
	if lw.synced {
		return nil
	}
	if err := fsx.SyncFile(c.Content); err != nil {
		return err
	}
	lw.synced = true
	return nil
}

// indexFile returns the synced temporary file holding the value's line
// index, written on first use; nil when the value has no index.
func (lw *localWrite) indexFile(c *backend.CommitReq) (*os.File, error) {
	if lw.index == nil && c.Index != nil {
		f, err := lw.writeIndex(c)
		if err != nil {
			return nil, err
		}
		lw.index = f
	}
	return lw.index, nil
}

func (lw *localWrite) writeIndex(c *backend.CommitReq) (*os.File, error) {
	f, err := format.CreateTemp(lw.dir, string(c.ID)+"-lines-")
	if err != nil {
		return nil, err
	}
	_, err = f.Write(c.Index)
	if err == nil {
		err = fsx.SyncFile(f)
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

// capacity returns why the run cannot take d, or "". A run is first
// bounded from above without reading a descriptor: every descriptor's
// name counts as a value, and a plain value's size is its content file's
// (the descriptor of a committed plain value says the same; the
// descriptor of one with a compressed file too is read). When even that
// bound fits — a run well inside its limits, nearly always — so does the
// run, for one lstat per value; only a run near a limit is counted
// exactly, by committedValue, as verify and gc count it. Without the
// bound, every commit read every descriptor of its run under the run's
// commit lock: a session's hundredth result read a hundred.
func (lw *localWrite) capacity(c *backend.CommitReq, d *format.Descriptor) (string, error) {
	L := c.Limits
	if L.MaxRunValues == 0 && L.MaxRunBytes == 0 {
		return "", nil
	}
	ents, err := os.ReadDir(lw.dir)
	if err != nil {
		return "", err
	}
	names := make(map[string]bool, len(ents))
	var ids []format.ID
	for _, e := range ents {
		names[e.Name()] = true
		if id, ok := strings.CutSuffix(e.Name(), format.MetaExt); ok && format.IsClean(id) {
			ids = append(ids, format.ID(id))
		}
	}
	var bound int64
	for _, id := range ids {
		plain := format.ContentName(id, format.CompressNone)
		if names[plain] && !names[format.ContentName(id, format.CompressZstd)] {
			if fi, err := os.Lstat(filepath.Join(lw.dir, plain)); err == nil {
				bound += fi.Size()
				continue
			}
		}
		if old, prob := committedValue(lw.dir, id); prob == nil {
			bound += old.Size
		}
	}
	if c.Full(int64(len(ids)), bound) == "" {
		return "", nil
	}
	var n, total int64
	for _, id := range ids {
		old, prob := committedValue(lw.dir, id)
		if prob != nil {
			continue // not a committed value: counts for nothing
		}
		n++
		total += old.Size
	}
	return c.Full(n, total), nil
}

// verify checks the value the call holds, as verify does.
func (lw *localWrite) verify(c *backend.CommitReq, old *format.Descriptor) []format.Problem {
	committed := func(id format.ID) (*format.Descriptor, *format.ValueProblem) { return committedValue(lw.dir, id) }
	return c.Verify(committed, old.Size > format.IndexMinSize)
}
