package retain

import (
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"sync"

	seekable "github.com/SaveTheRbtz/zstd-seekable-format-go/pkg"
	"github.com/klauspost/compress/zstd"
)

const (
	seekTableFrameMagic = 0x184D2A5E // a skippable frame's magic, tag 0xE
	seekTableFooterSize = 9
	seekTableChecksums  = 0x80 // the footer's descriptor: entries carry a checksum
	seekTableMagic      = 0x8F92EAB1
	maxFrameSize        = 4 << 20 // no frame of ours is larger; a larger one is refused
)

// zstdReaderAt reads the uncompressed bytes of a seekable zstd value,
// decoding only the frames a read needs and never more bytes than the
// seek table (checked against the descriptor) allows.
type zstdReaderAt struct {
	f     io.ReaderAt
	table *seekable.SeekTable
	size  int64
	dec   *zstd.Decoder

	frameID int64 // the frame in buf, or -1
	buf     []byte
	src     []byte

	// A sequential reader (a search streaming through the value) gets the
	// next frames decoded ahead on the other cores.
	last     int64 // the frame read before, or -1
	prefetch map[int64]*decoded
	free     [][]byte
	wg       sync.WaitGroup
}

// decoded is a frame being decoded ahead of its read.
type decoded struct {
	done chan struct{}
	buf  []byte
	err  error
}

// prefetchDepth is how many frames are decoded ahead of a sequential read.
var prefetchDepth = int64(max(1, runtime.GOMAXPROCS(0)))

// openZstd parses and checks the seek table of f against the descriptor.
func openZstd(f io.ReaderAt, d *Descriptor) (*zstdReaderAt, error) {
	bad := func(format string, args ...any) error {
		return Errorf(CodeCorrupt, "value %q: %s (run retval verify)", d.ID, fmt.Sprintf(format, args...))
	}
	stored := d.StoredBytes
	if stored < seekTableFooterSize {
		return nil, bad("zstd file too short for a seek table")
	}
	var footer [seekTableFooterSize]byte
	if _, err := f.ReadAt(footer[:], stored-seekTableFooterSize); err != nil {
		return nil, keepCollected(err, bad("reading seek table: %v", err))
	}
	if binary.LittleEndian.Uint32(footer[5:]) != seekTableMagic {
		return nil, bad("no seek table at the end of the zstd file")
	}
	n := int64(binary.LittleEndian.Uint32(footer[0:]))
	entry := int64(8)
	if footer[4]&seekTableChecksums != 0 {
		entry = 12
	}
	tableLen := 8 + n*entry + seekTableFooterSize
	if tableLen > stored || n > (d.Size/1)+1 {
		return nil, bad("seek table of %d frames does not fit the file", n)
	}
	buf := make([]byte, tableLen)
	if _, err := f.ReadAt(buf, stored-tableLen); err != nil {
		return nil, keepCollected(err, bad("reading seek table: %v", err))
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
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(int(prefetchDepth)+1), zstd.WithDecoderMaxMemory(maxFrameSize),
		zstd.WithDecoderMaxWindow(maxFrameSize))
	if err != nil {
		return nil, err
	}
	return &zstdReaderAt{f: f, table: t, size: d.Size, dec: dec, frameID: -1, last: -1, prefetch: map[int64]*decoded{}}, nil
}

func (z *zstdReaderAt) close() {
	z.wg.Wait()
	z.dec.Close()
}

// decode reads and decodes frame e into dst, checking that it yields
// exactly the size the seek table gives (never more: a bomb is corrupt).
func (z *zstdReaderAt) decode(e seekable.FrameOffsetEntry, src, dst []byte) ([]byte, error) {
	if _, err := z.f.ReadAt(src, int64(e.CompressedOffset)); err != nil {
		return nil, keepCollected(err, Errorf(CodeCorrupt, "zstd frame %d: %v", e.ID, err))
	}
	out, err := z.dec.DecodeAll(src, dst[:0])
	if err != nil || len(out) != int(e.DecompressedSize) {
		return nil, Errorf(CodeCorrupt, "zstd frame %d does not decode to its %d bytes (%v)", e.ID, e.DecompressedSize, err)
	}
	return out, nil
}

// ahead starts decoding the frames after id that are not yet under way.
func (z *zstdReaderAt) ahead(id int64) {
	for k := id + 1; k <= id+prefetchDepth && k < z.table.NumFrames(); k++ {
		if _, ok := z.prefetch[k]; ok {
			continue
		}
		e, _ := z.table.EntryByID(k)
		var dst []byte
		if n := len(z.free); n > 0 {
			dst, z.free = z.free[n-1], z.free[:n-1]
		}
		d := &decoded{done: make(chan struct{})}
		z.prefetch[k] = d
		z.wg.Go(func() {
			defer close(d.done)
			d.buf, d.err = z.decode(e, make([]byte, e.CompressedSize), dst)
		})
	}
}

// frame returns the decoded frame holding offset off, and its start.
func (z *zstdReaderAt) frame(off int64) ([]byte, int64, error) {
	e, ok := z.table.EntryByDecompressedOffset(uint64(off))
	if !ok {
		return nil, 0, io.EOF
	}
	if e.ID == z.frameID {
		return z.buf, int64(e.DecompressedOffset), nil
	}
	sequential := e.ID == z.last+1
	z.last = e.ID
	if z.frameID >= 0 && cap(z.buf) > 0 {
		z.free = append(z.free, z.buf[:0])
	}
	z.frameID, z.buf = -1, nil
	// Frames decoded ahead that this read skipped are dropped.
	for k, d := range z.prefetch {
		if k < e.ID || k > e.ID+prefetchDepth {
			<-d.done
			delete(z.prefetch, k)
		}
	}
	var out []byte
	var err error
	if d, ok := z.prefetch[e.ID]; ok {
		<-d.done
		delete(z.prefetch, e.ID)
		out, err = d.buf, d.err
	} else {
		if cap(z.src) < int(e.CompressedSize) {
			z.src = make([]byte, e.CompressedSize)
		}
		var dst []byte
		if n := len(z.free); n > 0 {
			dst, z.free = z.free[n-1], z.free[:n-1]
		}
		out, err = z.decode(e, z.src[:e.CompressedSize], dst)
	}
	if err != nil {
		return nil, 0, err
	}
	if sequential {
		z.ahead(e.ID)
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
