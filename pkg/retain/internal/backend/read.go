package backend

import (
	"io"
	"os"

	"github.com/retval/retval/pkg/retain/internal/format"
)

// OpenedValue is a value as its backend opened it, what a Value reads.
type OpenedValue struct {
	Desc format.Descriptor
	// raw is the stored bytes (a compressed value's zstd frames); f, when
	// set, is the local file they are read from (Close closes it, Map
	// maps it).
	Raw  io.ReaderAt
	File *os.File
	// index is the value's line index, nil when it has none or one that
	// did not check out.
	Index *format.Index
	// whole, set instead of raw, is the value's bytes, already checked
	// (a cache hit).
	Whole   []byte
	OnWhole func(format.Descriptor, []byte)
	// Pending, when set, waits for what the backend still does beside
	// the opening (the run's activity stamp): the store calls it once it
	// has opened the value.
	Pending func()
}
