package retain

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/retval/retval/internal/xxh3"
	"github.com/retval/retval/pkg/retain/internal/backend"
)

// Value is an open retained value. Every byte it returns has been checked:
// a small value against its SHA-256 (it is read whole once), a large one
// block by block against the XXH3-64 digests kept with its line index. A
// mismatch is ErrCorrupt, never wrong bytes. A Value is not safe for
// concurrent use.
type Value struct {
	Desc  Descriptor
	Run   ID
	f     *os.File
	raw   io.ReaderAt   // the uncompressed bytes, unchecked: f or a zstd decoder
	zr    *zstdReaderAt // nil for a plain value
	index *Index        // nil for a small value or an index that did not check out

	whole []byte // a small value, verified
	// A large value whose index is unusable is verified whole by streaming
	// once; after that its blocks are trusted as read.
	wholeChecked bool

	block    []byte // the last verified block
	blockNum int64

	// onWhole, when set, is told of the value's bytes once they were read
	// whole and checked (the cache is filled from them).
	onWhole func(Descriptor, []byte)
}

// newValue is the Value that reads op, a value of run.
func newValue(run ID, op *backend.OpenedValue) (*Value, error) {
	if op.Whole != nil {
		return &Value{Desc: op.Desc, Run: run, raw: bytes.NewReader(op.Whole), whole: op.Whole, wholeChecked: true, blockNum: -1}, nil
	}
	v := &Value{Desc: op.Desc, Run: run, f: op.File, raw: op.Raw, index: op.Index, blockNum: -1, onWhole: op.OnWhole}
	if v.Desc.Compression == CompressZstd {
		zr, err := openZstd(op.Raw, &v.Desc)
		if err != nil {
			v.Close()
			return nil, err
		}
		v.zr, v.raw = zr, zr
	}
	return v, nil
}

// OpenValue opens value id (a value id, or the call id it was made from) of
// run for reading. It fails with ErrNotFound, ErrCollected or ErrCorrupt.
// Opening records read activity on the run (at most once an hour).
func (s *Store) OpenValue(run, id string) (*Value, error) {
	return s.openValue(run, id, true)
}

func (s *Store) openValue(run, id string, touch bool) (*Value, error) {
	rid, err := Sanitize(run)
	if err != nil {
		return nil, Errorf(CodeUsage, "run id: %v", err)
	}
	vid, err := Sanitize(id)
	if err != nil {
		return nil, Errorf(CodeUsage, "value id: %v", err)
	}
	b, err := s.backend()
	if err != nil {
		return nil, err
	}
	op, err := b.OpenValue(rid, run, id, vid, touch)
	if err != nil {
		return nil, err
	}
	v, err := newValue(rid, op)
	if op.Pending != nil {
		op.Pending()
	}
	return v, err
}

// Close releases the value's file.
func (v *Value) Close() error {
	if v.zr != nil {
		v.zr.close()
	}
	if v.f == nil {
		return nil // read from object storage: nothing held open
	}
	return v.f.Close()
}

// Size is the value's size in bytes.
func (v *Value) Size() int64 { return v.Desc.Size }

// Index returns the value's line index, or nil when it has none (small
// values, or an index that did not match and is ignored).
func (v *Value) Index() *Index { return v.index }

func (v *Value) corrupt(format string, args ...any) error {
	return Errorf(CodeCorrupt, "value %q of run %q is corrupt: %s (run retval verify)", v.Desc.ID, v.Run, fmt.Sprintf(format, args...))
}

// loadWhole reads a small value and checks its SHA-256.
func (v *Value) loadWhole() error {
	b := make([]byte, v.Desc.Size)
	if _, err := io.ReadFull(io.NewSectionReader(v.raw, 0, v.Desc.Size), b); err != nil {
		return keepCollected(err, v.corrupt("%v", err))
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != v.Desc.SHA256 {
		return v.corrupt("sha256 does not match")
	}
	v.whole = b
	if v.onWhole != nil {
		v.onWhole(v.Desc, b)
		v.onWhole = nil
	}
	return nil
}

// checkWhole verifies a large value without a usable index by hashing it.
func (v *Value) checkWhole() error {
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(v.raw, 0, v.Desc.Size)); err != nil {
		return keepCollected(err, v.corrupt("%v", err))
	}
	if hex.EncodeToString(h.Sum(nil)) != v.Desc.SHA256 {
		return v.corrupt("sha256 does not match")
	}
	v.wholeChecked = true
	return nil
}

// readBlock returns verified block i of a large value.
func (v *Value) readBlock(i int64) ([]byte, error) {
	if i == v.blockNum {
		return v.block, nil
	}
	off := i * BlockSize
	n := min(BlockSize, v.Desc.Size-off)
	if cap(v.block) < BlockSize {
		v.block = make([]byte, BlockSize)
	}
	b := v.block[:n]
	v.blockNum = -1
	if _, err := v.raw.ReadAt(b, off); err != nil && !(err == io.EOF && len(b) == int(n)) {
		return nil, keepCollected(err, v.corrupt("reading block %d: %v", i, err))
	}
	if v.index != nil && xxh3.Hash(b) != v.index.Blocks[i] {
		return nil, v.corrupt("block %d (bytes %d-%d) does not match its digest", i, off, off+n)
	}
	v.block, v.blockNum = b, i
	return b, nil
}

// ReadAt reads verified bytes at off, as io.ReaderAt.
func (v *Value) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	if off >= v.Desc.Size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	if v.Desc.Size <= IndexMinSize {
		if v.whole == nil {
			if err := v.loadWhole(); err != nil {
				return 0, err
			}
		}
		n := copy(p, v.whole[off:])
		if n < len(p) {
			return n, io.EOF
		}
		return n, nil
	}
	if v.index == nil && !v.wholeChecked {
		if err := v.checkWhole(); err != nil {
			return 0, err
		}
	}
	n := 0
	for n < len(p) && off < v.Desc.Size {
		b, err := v.readBlock(off / BlockSize)
		if err != nil {
			return n, err
		}
		k := copy(p[n:], b[off%BlockSize:])
		n += k
		off += int64(k)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Section returns a reader of the verified bytes [off, end).
func (v *Value) Section(off, end int64) io.Reader {
	return io.NewSectionReader(v, off, end-off)
}

// Bytes returns the verified bytes [off, end). The caller bounds the size.
func (v *Value) Bytes(off, end int64) ([]byte, error) {
	if off < 0 || end < off || end > v.Desc.Size {
		return nil, Errorf(CodeInvalidRange, "bytes %d-%d outside value of %d bytes", off, end, v.Desc.Size)
	}
	b := make([]byte, end-off)
	if _, err := v.ReadAt(b, off); err != nil && err != io.EOF {
		return nil, err
	}
	return b, nil
}

// Descriptor returns the descriptor of value id of run without opening its
// content.
func (s *Store) Descriptor(run, id string) (*Descriptor, error) {
	v, err := s.OpenValue(run, id)
	if err != nil {
		return nil, err
	}
	defer v.Close()
	d := v.Desc
	return &d, nil
}
