package retain

import (
	"io"

	"github.com/retval/retval/internal/xxh3"
)

// ReadBlocks is ReadAt for long sequential scans (a search through a whole
// value): when off is a multiple of BlockSize it reads the whole blocks of
// p straight into p with one system call and checks each against its
// digest, instead of reading block by block through a buffer and copying.
// The bytes are checked exactly as ReadAt checks them; a mismatch is
// ErrCorrupt. Other offsets, small values and the tail are served by
// ReadAt.
func (v *Value) ReadBlocks(p []byte, off int64) (int, error) {
	if off < 0 || off%BlockSize != 0 || v.Desc.Size <= IndexMinSize || off >= v.Desc.Size {
		return v.ReadAt(p, off)
	}
	if v.index == nil && !v.wholeChecked {
		if err := v.checkWhole(); err != nil {
			return 0, err
		}
	}
	whole := min(int64(len(p)), v.Desc.Size-off)
	if rest := v.Desc.Size - off; whole < rest {
		whole -= whole % BlockSize // only whole blocks, except at the very end
	}
	if whole == 0 {
		return v.ReadAt(p, off)
	}
	b := p[:whole]
	if _, err := v.raw.ReadAt(b, off); err != nil && !(err == io.EOF && off+whole == v.Desc.Size) {
		return 0, keepCollected(err, v.corrupt("reading bytes %d-%d: %v", off, off+whole, err))
	}
	if v.index != nil {
		for i := int64(0); i < whole; i += BlockSize {
			blk := b[i:min(whole, i+BlockSize)]
			if n := (off + i) / BlockSize; xxh3.Hash(blk) != v.index.Blocks[n] {
				return 0, v.corrupt("block %d (bytes %d-%d) does not match its digest", n, off+i, off+i+int64(len(blk)))
			}
		}
	}
	if whole == int64(len(p)) {
		return len(p), nil
	}
	n, err := v.ReadAt(p[whole:], off+whole)
	return int(whole) + n, err
}

// ConcurrentBlocks returns BlockSize when ReadBlocks may be called from
// several goroutines at once, at offsets and with lengths that are
// multiples of it (the last read may end at the end of the value): for a
// plain large value with a usable index, whose whole blocks ReadBlocks
// reads straight into the caller's buffer and checks there, touching
// nothing of the Value's own. Otherwise (a small or compressed value, or
// one without its index) it returns 0, and the Value is not safe for
// concurrent use.
func (v *Value) ConcurrentBlocks() int64 {
	if v.zr == nil && v.index != nil && v.Desc.Size > IndexMinSize {
		return BlockSize
	}
	return 0
}
