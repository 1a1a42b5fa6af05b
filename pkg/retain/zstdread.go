package retain

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"

	seekable "github.com/SaveTheRbtz/zstd-seekable-format-go/pkg"
	"github.com/klauspost/compress/zstd"
)

const (
	seekTableFooterSize = 9
	seekTableMagic      = 0x8F92EAB1
	maxFrameSize        = 4 << 20 // no frame of ours is larger; a larger one is refused
)

// zstdReaderAt reads the uncompressed bytes of a seekable zstd value,
// decoding only the frames a read needs and never more bytes than the
// seek table (checked against the descriptor) allows.
type zstdReaderAt struct {
	f     *os.File
	table *seekable.SeekTable
	size  int64
	dec   *zstd.Decoder

	frameID int64 // the frame in buf, or -1
	buf     []byte
	src     []byte
}

// openZstd parses and checks the seek table of f against the descriptor.
func openZstd(f *os.File, d *Descriptor) (*zstdReaderAt, error) {
	bad := func(format string, args ...any) error {
		return Errorf(CodeCorrupt, "value %q: %s (run retval verify)", d.ID, fmt.Sprintf(format, args...))
	}
	stored := d.StoredBytes
	if stored < seekTableFooterSize {
		return nil, bad("zstd file too short for a seek table")
	}
	var footer [seekTableFooterSize]byte
	if _, err := f.ReadAt(footer[:], stored-seekTableFooterSize); err != nil {
		return nil, bad("reading seek table: %v", err)
	}
	if binary.LittleEndian.Uint32(footer[5:]) != seekTableMagic {
		return nil, bad("no seek table at the end of the zstd file")
	}
	n := int64(binary.LittleEndian.Uint32(footer[0:]))
	entry := int64(8)
	if footer[4]&0x80 != 0 {
		entry = 12
	}
	tableLen := 8 + n*entry + seekTableFooterSize
	if tableLen > stored || n > (d.Size/1)+1 {
		return nil, bad("seek table of %d frames does not fit the file", n)
	}
	buf := make([]byte, tableLen)
	if _, err := f.ReadAt(buf, stored-tableLen); err != nil {
		return nil, bad("reading seek table: %v", err)
	}
	t, err := seekable.NewSeekTable(buf)
	if err != nil {
		return nil, bad("seek table: %v", err)
	}
	if int64(t.Size()) != d.Size {
		return nil, bad("seek table says %d bytes, descriptor %d", t.Size(), d.Size)
	}
	var coff uint64
	for i := int64(0); i < t.NumFrames(); i++ {
		e, _ := t.EntryByID(i)
		if e.CompressedOffset != coff || e.DecompressedSize > maxFrameSize {
			return nil, bad("seek table entry %d is inconsistent", i)
		}
		coff += uint64(e.CompressedSize)
	}
	if int64(coff) != stored-tableLen {
		return nil, bad("frames hold %d bytes, file %d", coff, stored-tableLen)
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxFrameSize),
		zstd.WithDecoderMaxWindow(maxFrameSize))
	if err != nil {
		return nil, err
	}
	return &zstdReaderAt{f: f, table: t, size: d.Size, dec: dec, frameID: -1}, nil
}

func (z *zstdReaderAt) close() { z.dec.Close() }

// frame returns the decoded frame holding offset off, and its start.
func (z *zstdReaderAt) frame(off int64) ([]byte, int64, error) {
	e, ok := z.table.EntryByDecompressedOffset(uint64(off))
	if !ok {
		return nil, 0, io.EOF
	}
	if e.ID == z.frameID {
		return z.buf, int64(e.DecompressedOffset), nil
	}
	z.frameID = -1
	if cap(z.src) < int(e.CompressedSize) {
		z.src = make([]byte, e.CompressedSize)
	}
	src := z.src[:e.CompressedSize]
	if _, err := z.f.ReadAt(src, int64(e.CompressedOffset)); err != nil {
		return nil, 0, Errorf(CodeCorrupt, "zstd frame %d: %v", e.ID, err)
	}
	if cap(z.buf) < int(e.DecompressedSize) {
		z.buf = make([]byte, 0, e.DecompressedSize)
	}
	out, err := z.dec.DecodeAll(src, z.buf[:0])
	if err != nil || len(out) != int(e.DecompressedSize) {
		return nil, 0, Errorf(CodeCorrupt, "zstd frame %d does not decode to its %d bytes (%v)", e.ID, e.DecompressedSize, err)
	}
	z.buf, z.frameID = out, e.ID
	return out, int64(e.DecompressedOffset), nil
}

// ReadAt reads uncompressed (not yet verified) bytes.
func (z *zstdReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		if off >= z.size {
			return n, io.EOF
		}
		b, start, err := z.frame(off)
		if err != nil {
			return n, err
		}
		k := copy(p[n:], b[off-start:])
		n += k
		off += int64(k)
	}
	return n, nil
}
