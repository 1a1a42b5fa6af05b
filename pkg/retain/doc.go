// Package retain owns retval's store: a directory of runs, each holding the
// values retained in it. A value is a tool result written once — content
// file, then its descriptor as the commit point — and never changed; what
// the model sees instead is its stub, a deterministic function of the
// value's bytes, id, metadata and settings.
//
// A Go harness uses it as the CLI does:
//
//	store := retain.Open("runs")
//	res, err := store.Retain(toolOutput, os.Stdout, retain.RetainOptions{
//		Run: run, Call: callID, Limits: retain.DefaultLimits(),
//	})
//	// res.Verbatim: the output went to os.Stdout unchanged (small, or the
//	// store could not take it); otherwise show the model res.Stub.
//
// and reads values back with OpenValue, whose ReadAt, Bytes and Section
// check every byte against the value's digests (a mismatch is ErrCorrupt,
// never wrong bytes). Packages peek, expand and gc read and collect through
// this package, never around it.
//
// Inside, the store is three rooms: this package (the operations, the
// stub renderer, checked reads), internal/format (ids, names, descriptors,
// the index and the records every part reads and writes), and its storage
// behind internal/backend's Backend, a runs-dir (backend/local) or object
// storage (backend/object), chosen once from the store's address.
//
// Ids: Sanitize maps any call or run id to a file-name-safe ID, so a path
// outside the run directory cannot be named. Errors carry a Code (CodeOf);
// the sentinels ErrNotFound, ErrCollected, ErrCorrupt, ErrConflict and
// ErrCapacity match them with errors.Is.
package retain
