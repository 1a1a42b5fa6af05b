package format

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"unsafe"

	"github.com/retval/retval/internal/xxh3"
)

// The .lines file: a sparse line-offset index plus per-block digests, kept
// for values larger than IndexMinSize. Everything is little-endian:
//
//	magic      [8]byte "RVLINES1"
//	size       u64     the value's size
//	sha256     [32]    the value's SHA-256 (binds index to value)
//	stride     u32     lines per line entry (LineStride)
//	blockSize  u32     bytes per digest block (BlockSize)
//	nLines     u64     number of line entries
//	nBlocks    u64     number of block digests
//	lines      nLines × u64: offset of the first byte of line 1+i*stride
//	blocks     nBlocks × u64: XXH3-64 of block i
//	check      u64     XXH3-64 of everything above
//
// It is checked before use (check, size, digest, monotone offsets); one that
// does not match is ignored, never trusted.
const (
	indexMagic   = "RVLINES1"
	LineStride   = 512
	BlockSize    = 64 << 10
	IndexMinSize = 1 << 20 // values up to this are hashed whole instead
	IndexHeader  = 8 + 8 + 32 + 4 + 4 + 8 + 8
)

// Index is a value's parsed .lines file.
type Index struct {
	Size   int64
	Stride int64
	// Starts[i] is the byte offset where line 1+i*Stride begins.
	Starts []int64
	// Blocks[i] is the XXH3-64 of bytes [i*BlockSize, (i+1)*BlockSize).
	Blocks []uint64
}

// IndexBuilder accumulates an Index as the value streams past.
type IndexBuilder struct {
	off      int64 // bytes seen
	newlines int64 // newlines seen
	starts   []int64
	blocks   []uint64
	h        *xxh3.Hasher
	inBlock  int
}

func NewIndexBuilder() *IndexBuilder {
	return &IndexBuilder{starts: []int64{0}, h: xxh3.New()}
}

func (b *IndexBuilder) Write(p []byte) {
	// Line entries: an entry for every stride-th newline. Whole 4 KiB
	// pieces are skipped with a SIMD count; only the piece holding the
	// next stride-th newline is walked.
	q, base := p, b.off
	for len(q) > 0 {
		need := LineStride - b.newlines%LineStride
		piece := q[:min(len(q), 4096)]
		c := int64(bytes.Count(piece, nl))
		if c < need {
			b.newlines += c
			base += int64(len(piece))
			q = q[len(piece):]
			continue
		}
		pos := 0
		for k := need; k > 0; k-- {
			pos += bytes.IndexByte(piece[pos:], '\n') + 1
		}
		b.newlines += need
		base += int64(pos)
		b.starts = append(b.starts, base)
		q = q[pos:]
	}
	// Block digests.
	for len(p) > 0 {
		n := min(len(p), BlockSize-b.inBlock)
		b.h.Write(p[:n])
		b.inBlock += n
		p = p[n:]
		b.off += int64(n)
		if b.inBlock == BlockSize {
			b.blocks = append(b.blocks, b.h.Sum64())
			b.h.Reset()
			b.inBlock = 0
		}
	}
}

var nl = []byte{'\n'}

// Finish returns the encoded index for a value of the given digest.
func (b *IndexBuilder) Finish(sha []byte) []byte {
	if b.inBlock > 0 {
		b.blocks = append(b.blocks, b.h.Sum64())
	}
	// An entry that points at the very end (the value ends in a newline on a
	// stride boundary) names a line that does not exist; drop it.
	if n := len(b.starts); n > 1 && b.starts[n-1] == b.off {
		b.starts = b.starts[:n-1]
	}
	out := make([]byte, 0, IndexHeader+8*(len(b.starts)+len(b.blocks))+8)
	out = append(out, indexMagic...)
	out = binary.LittleEndian.AppendUint64(out, uint64(b.off))
	out = append(out, sha...)
	out = binary.LittleEndian.AppendUint32(out, LineStride)
	out = binary.LittleEndian.AppendUint32(out, BlockSize)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(b.starts)))
	out = binary.LittleEndian.AppendUint64(out, uint64(len(b.blocks)))
	for _, s := range b.starts {
		out = binary.LittleEndian.AppendUint64(out, uint64(s))
	}
	for _, h := range b.blocks {
		out = binary.LittleEndian.AppendUint64(out, h)
	}
	return binary.LittleEndian.AppendUint64(out, xxh3.Hash(out))
}

var ErrBadIndex = errors.New("line index does not match its value")

// MaxIndexSize bounds an index file: one for the largest value retval
// keeps is far smaller, so a larger one is not retval's and is not read.
const MaxIndexSize = 64 << 20

// ParseIndex checks and parses the bytes of an index of the value d. The
// Index refers to b (its entries are read in place): the caller hands b
// over and must not write it again.
func ParseIndex(b []byte, d *Descriptor) (*Index, error) {
	if len(b) < IndexHeader+8 {
		return nil, ErrBadIndex
	}
	body, sum := b[:len(b)-8], binary.LittleEndian.Uint64(b[len(b)-8:])
	if xxh3.Hash(body) != sum || string(body[:8]) != indexMagic {
		return nil, ErrBadIndex
	}
	le := binary.LittleEndian
	size := int64(le.Uint64(body[8:]))
	sha := hex.EncodeToString(body[16:48])
	stride := int64(le.Uint32(body[48:]))
	bs := int64(le.Uint32(body[52:]))
	nLines, nBlocks := le.Uint64(body[56:]), le.Uint64(body[64:])
	if size != d.Size || sha != d.SHA256 || stride <= 0 || bs != BlockSize ||
		nBlocks != uint64((size+BlockSize-1)/BlockSize) || nLines == 0 ||
		uint64(len(body)) != IndexHeader+8*(nLines+nBlocks) {
		return nil, ErrBadIndex
	}
	p := body[IndexHeader:]
	ix := &Index{Size: size, Stride: stride, Starts: int64s(p[:8*nLines]), Blocks: uint64s(p[8*nLines:])}
	for i, o := range ix.Starts {
		if o < 0 || o > size || i > 0 && o <= ix.Starts[i-1] {
			return nil, ErrBadIndex
		}
	}
	if ix.Starts[0] != 0 {
		return nil, ErrBadIndex
	}
	return ix, nil
}

// uint64s returns the little-endian u64s of p. Where the host is
// little-endian too (amd64, arm64: every platform retval ships on) and p
// is aligned, they are read where they are: a 1 GiB value's index is 276
// KB, and copying it entry by entry cost every peek of such a value 68
// page faults of a fresh process (≈0.3 ms; perf record -e page-faults).
func uint64s(p []byte) []uint64 {
	n := len(p) / 8
	if n > 0 && nativeLittle && uintptr(unsafe.Pointer(&p[0]))%8 == 0 {
		return unsafe.Slice((*uint64)(unsafe.Pointer(&p[0])), n)
	}
	u := make([]uint64, n)
	for i := range u {
		u[i] = binary.LittleEndian.Uint64(p[8*i:])
	}
	return u
}

func int64s(p []byte) []int64 {
	u := uint64s(p)
	return unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(u))), len(u))
}

var nativeLittle = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// LineStart returns the nearest indexed line at or before line (1-based)
// and the offset where it starts. Lines between must be found by scanning
// forward from there.
func (ix *Index) LineStart(line int64) (at, off int64) {
	i := (line - 1) / ix.Stride
	if i >= int64(len(ix.Starts)) {
		i = int64(len(ix.Starts)) - 1
	}
	if i < 0 {
		i = 0
	}
	return 1 + i*ix.Stride, ix.Starts[i]
}
