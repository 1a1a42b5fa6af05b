package object

import (
	"errors"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/retval/retval/pkg/retain/internal/backend"
	"github.com/retval/retval/pkg/retain/internal/format"
	"github.com/retval/retval/pkg/retain/s3store"
)

// Runs on object storage are read from listings: a run is every key under
// <run>.values/, its entries are those keys (a key under .steps/ or .reads/
// is one entry, as a ledger is locally), and its last activity is the
// newest Last-Modified among them. There are no locks, so no run is ever
// busy: a run being written shows up as active through the recent
// Last-Modified of what its writer uploaded.

// RunsDirMissing: a prefix that holds no key at all is a store where
// nothing was ever retained.
func (o *Backend) RunsDirMissing() (bool, error) {
	found := false
	err := o.b.List(o.ctx, "", func(s3store.Object) error {
		found = true
		return errStop
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	return !found, o.ioErr(err)
}

// RunIDs lists the runs by their key prefixes, sorted, leaving out a run
// whose collection is committed (a gc's marker with the tombstone written
// after it): locally that run would already be renamed out of the store.
func (o *Backend) RunIDs() ([]format.ID, error) {
	var out []format.ID
	err := o.b.Prefixes(o.ctx, "", func(p string) error {
		if id, ok := format.RunFromDirName(strings.TrimSuffix(p, "/")); ok {
			out = append(out, id)
		}
		return nil
	})
	if err != nil {
		return nil, o.ioErr(err)
	}
	gone, err := o.committedCollections()
	if err != nil {
		return nil, err
	}
	out = deleteIDs(out, gone)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

func deleteIDs(ids []format.ID, gone map[format.ID]bool) []format.ID {
	if len(gone) == 0 {
		return ids
	}
	keep := ids[:0]
	for _, id := range ids {
		if !gone[id] {
			keep = append(keep, id)
		}
	}
	return keep
}

// marker is a collection marker found under .retval/collecting/.
type marker struct {
	Run      format.ID
	Key      string
	Modified time.Time
	// Committed: the run's tombstone was written after the marker, so the
	// collection passed its commit point and what is left of the run goes.
	Committed bool
}

// markers lists the collection markers, each judged committed or not.
func (o *Backend) markers() ([]marker, error) {
	var out []marker
	err := o.b.List(o.ctx, CollectingDir, func(ob s3store.Object) error {
		name := strings.TrimPrefix(ob.Key, CollectingDir)
		out = append(out, marker{Run: format.ID(name), Key: ob.Key, Modified: ob.Modified})
		return nil
	})
	if err != nil {
		return nil, o.ioErr(err)
	}
	for i := range out {
		m := &out[i]
		if !format.IsClean(string(m.Run)) {
			continue
		}
		t, err := o.b.Stat(o.ctx, TombstoneKey(m.Run))
		if err == nil {
			m.Committed = !t.Modified.Before(m.Modified)
		} else if !errors.Is(err, s3store.ErrNotFound) {
			return nil, o.ioErr(err)
		}
	}
	return out, nil
}

// committedCollections are the runs whose collection is committed.
func (o *Backend) committedCollections() (map[format.ID]bool, error) {
	ms, err := o.markers()
	if err != nil {
		return nil, err
	}
	var gone map[format.ID]bool
	for _, m := range ms {
		if m.Committed {
			if gone == nil {
				gone = map[format.ID]bool{}
			}
			gone[m.Run] = true
		}
	}
	return gone, nil
}

// ScanRunEntries is ScanRunEntries from one listing of the run.
func (o *Backend) ScanRunEntries(run format.ID) (*format.RunInfo, error) {
	s := o
	objs, err := o.runObjects(run)
	if err != nil {
		return nil, o.ioErr(err)
	}
	if len(objs) == 0 {
		return nil, s.missingRun(run)
	}
	return o.runInfo(run, objs), nil
}

// runInfo classifies a run's listing as ScanRunEntries does a directory.
func (o *Backend) runInfo(run format.ID, objs map[string]s3store.Object) *format.RunInfo {
	ri := &format.RunInfo{Run: run, Dir: o.where(strings.TrimSuffix(RunPrefix(run), "/"))}
	descs := map[format.ID]bool{}
	for name := range objs {
		if id, ok := strings.CutSuffix(name, format.MetaExt); ok && format.IsClean(id) {
			descs[format.ID(id)] = true
		}
	}
	content := map[format.ID]int{}
	for name, ob := range objs {
		e := format.RunEntry{Name: name, Bytes: ob.Size, ModTime: ob.Modified}
		dir, base := path.Split(name)
		switch {
		case dir == format.StepsDirName+"/":
			e.Kind = format.KindOwn
			if format.IsTemp(base) {
				e.Kind = format.KindTemp
			}
			if ob.Modified.After(ri.StepsModTime) {
				ri.StepsModTime = ob.Modified
			}
		case strings.HasPrefix(name, format.ReadsDir):
			e.Kind = format.KindOwn
		case dir != "":
			e.Kind = format.KindStray
		case name == format.ActivityName || name == format.LockName:
			e.Kind = format.KindOwn
		case format.IsTemp(name):
			e.Kind = format.KindTemp
		default:
			e.Kind = format.KindStray
			if id, ok := format.ValueOf(name); ok {
				format.ClassifyValueFile(&e, id, descs, content)
			}
		}
		ri.Entries = append(ri.Entries, e)
	}
	for id, n := range content {
		if n < 2 || !descs[id] {
			continue
		}
		d, _, err := o.getDescriptor(run, id)
		if err != nil {
			continue // verify reports it; keep both meanwhile
		}
		format.OrphanOtherContent(ri, id, d)
	}
	for _, e := range ri.Entries {
		ri.Bytes += e.Bytes
		if e.ModTime.After(ri.LastActivity) {
			ri.LastActivity = e.ModTime
		}
	}
	sort.Slice(ri.Entries, func(i, j int) bool { return ri.Entries[i].Name < ri.Entries[j].Name })
	for i := range ri.Entries {
		ri.Entries[i].Path = string(run) + format.RunSuffix + "/" + ri.Entries[i].Name
	}
	return ri
}

// entryObjects is a run's listing again, from its entries.
func entryObjects(ri *format.RunInfo) map[string]s3store.Object {
	objs := make(map[string]s3store.Object, len(ri.Entries))
	for _, e := range ri.Entries {
		objs[e.Name] = s3store.Object{Key: e.Name, Size: e.Bytes, Modified: e.ModTime}
	}
	return objs
}

// RunBusy: there are no locks on object storage; a run in use is active
// by its times.
func (o *Backend) RunBusy(format.ID) (bool, error) { return false, nil }

// HoldRun: there are no run locks on object storage (gc holds a lease,
// and marks a run it collects); a run that exists is held by nothing.
func (o *Backend) HoldRun(run format.ID, _ bool) (*backend.RunLock, error) {
	if err := o.MustExist(run); err != nil {
		return nil, err
	}
	return backend.NewRunLock(run, o.where(strings.TrimSuffix(RunPrefix(run), "/")), nil), nil
}
