//go:build unix

package retain

import (
	"runtime/debug"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/retval/retval/internal/xxh3"
)

// Mapping is a plain value's content file mapped read-only into memory,
// for one long sequential scan (a search through the whole value): the
// bytes are searched where the page cache holds them, with no copy into a
// buffer. Its bytes are checked only where Check said so, and only code
// run by Guard may read them.
type Mapping struct {
	v    *Value
	data []byte
}

// Map maps v into memory, or returns nil (and no error) where it cannot
// be: a small or compressed value, one without a usable index, or a
// mapping the system refuses. The caller reads with ReadBlocks then.
func (v *Value) Map() (*Mapping, error) {
	if v.f == nil || v.ConcurrentBlocks() == 0 || unsafe.Sizeof(uintptr(0)) < 8 {
		return nil, nil
	}
	rc, err := v.f.SyscallConn()
	if err != nil {
		return nil, nil
	}
	var data []byte
	if cerr := rc.Control(func(fd uintptr) {
		data, err = unix.Mmap(int(fd), 0, int(v.Desc.Size), unix.PROT_READ, unix.MAP_SHARED)
	}); cerr != nil || err != nil {
		return nil, nil
	}
	_ = unix.Madvise(data, unix.MADV_SEQUENTIAL)
	return &Mapping{v: v, data: data}, nil
}

// Data returns the mapped bytes, the whole value. They are the value's
// only within the ranges Check accepted.
func (m *Mapping) Data() []byte { return m.data }

// Check verifies the blocks of [off, end) against their digests: off is a
// multiple of BlockSize, end one too or the value's size. It may run on
// several goroutines at once, on ranges of their own.
func (m *Mapping) Check(off, end int64) error {
	if off < 0 || off%BlockSize != 0 || end > m.v.Desc.Size || end < off || end%BlockSize != 0 && end != m.v.Desc.Size {
		return Errorf(CodeUsage, "check of bytes %d-%d: not whole blocks of the value", off, end)
	}
	return m.Guard(func() error {
		for i := off; i < end; i += BlockSize {
			blk := m.data[i:min(end, i+BlockSize)]
			if n := i / BlockSize; xxh3.Hash(blk) != m.v.index.Blocks[n] {
				return m.v.corrupt("block %d (bytes %d-%d) does not match its digest", n, i, i+int64(len(blk)))
			}
		}
		return nil
	})
}

// Guard runs f on the calling goroutine, turning a fault while it reads the
// mapping into ErrCorrupt: a content file that shrank under the mapping (a
// damaged or hostile store) faults on the pages past its new end, which
// would otherwise end the process.
func (m *Mapping) Guard(f func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		r := recover()
		debug.SetPanicOnFault(old)
		if r == nil {
			return
		}
		base := uintptr(unsafe.Pointer(unsafe.SliceData(m.data)))
		if e, ok := r.(interface{ Addr() uintptr }); ok && e.Addr() >= base && e.Addr() < base+uintptr(len(m.data)) {
			err = m.v.corrupt("the content file changed while it was read (a fault at byte %d)", e.Addr()-base)
			return
		}
		panic(r)
	}()
	return f()
}

// Release says the scan is done with the bytes before end: their pages
// leave the process (they stay in the page cache), so a scan of a large
// value holds a few chunks in memory, not the value. Reading them again
// faults them back in.
func (m *Mapping) Release(end int64) {
	page := int64(unix.Getpagesize())
	if end -= end % page; end > 0 {
		_ = unix.Madvise(m.data[:min(end, int64(len(m.data)))], unix.MADV_DONTNEED)
	}
}

// Close unmaps the value. Nothing may read Data after it.
func (m *Mapping) Close() error {
	if m.data == nil {
		return nil
	}
	err := unix.Munmap(m.data)
	m.data = nil
	return err
}
