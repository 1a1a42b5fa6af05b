package peek

import (
	"runtime"
	"sync"

	"github.com/retval/retval/pkg/retain"
)

// concurrentSource is a source that may be read from several goroutines
// at once, at offsets and lengths that are multiples of what
// ConcurrentBlocks returns (0: it may not; see
// retain.Value.ConcurrentBlocks).
type concurrentSource interface {
	ConcurrentBlocks() int64
}

// chunk is one piece of a value read ahead: n bytes at off, in
// buf[room:room+n].
type chunk struct {
	buf []byte
	off int64
	n   int
	err error
}

// chunkReader reads a value from start to end, size bytes at a time, and
// hands the chunks over in order. Where the source allows it, several
// goroutines read (and verify) chunks ahead of the consumer, so that a
// search through a large value is bound by the cores' reading speed
// rather than one core's; otherwise it reads each chunk when asked.
type chunkReader struct {
	src  source
	size int   // bytes a chunk holds
	room int   // bytes of room in front of each chunk's bytes
	end  int64 // the value's size
	next int64 // offset of the next chunk to hand over

	// Read ahead: worker w reads chunks w, w+W, w+2W, … into its own two
	// buffers and delivers them on out[w]; free[w] takes buffers back.
	out  []chan *chunk
	free []chan []byte
	stop chan struct{}
	wg   sync.WaitGroup
	seq  []byte // the one buffer of a sequential reader
	cur  *chunk // the chunk last handed over, until the next call
	k    int    // index of the next chunk
}

// readAheadWorkers is how many goroutines read ahead: one per core, at
// most four (a variable so that tests can vary it).
var readAheadWorkers = func() int { return min(runtime.GOMAXPROCS(0), 4) }

func newChunkReader(src source, size, room int) *chunkReader {
	r := &chunkReader{src: src, size: size, room: room, end: src.Size()}
	w := readAheadWorkers()
	align := int64(0)
	if cs, ok := src.(concurrentSource); ok {
		align = cs.ConcurrentBlocks()
	}
	if align <= 0 || int64(size)%align != 0 || w < 2 || r.end <= int64(size) {
		r.seq = make([]byte, room+size)
		return r
	}
	r.stop = make(chan struct{})
	for i := range w {
		out, free := make(chan *chunk, 2), make(chan []byte, 2)
		free <- make([]byte, room+size)
		free <- make([]byte, room+size)
		r.out, r.free = append(r.out, out), append(r.free, free)
		r.wg.Add(1)
		go r.work(i, w, out, free)
	}
	return r
}

func (r *chunkReader) work(i, w int, out chan<- *chunk, free <-chan []byte) {
	defer r.wg.Done()
	for k := int64(i); k*int64(r.size) < r.end; k += int64(w) {
		var buf []byte
		select {
		case buf = <-free:
		case <-r.stop:
			return
		}
		c := &chunk{buf: buf, off: k * int64(r.size)}
		c.n, c.err = r.read(buf, c.off)
		select {
		case out <- c:
		case <-r.stop:
			return
		}
		if c.err != nil {
			return
		}
	}
}

// Next returns the next chunk: its offset, a buffer holding its n bytes at
// buf[room:room+n], and the error of reading it. The buffer is the
// caller's until the next call. At the end it returns n == 0.
func (r *chunkReader) Next() (buf []byte, off int64, n int, err error) {
	if r.cur != nil {
		r.free[(r.k-1)%len(r.out)] <- r.cur.buf
		r.cur = nil
	}
	if r.next >= r.end {
		return nil, r.end, 0, nil
	}
	if r.seq != nil {
		off = r.next
		n, err = r.read(r.seq, off)
		r.next += int64(n)
		return r.seq, off, n, err
	}
	c := <-r.out[r.k%len(r.out)]
	r.k++
	r.cur = c
	r.next = c.off + int64(c.n)
	return c.buf, c.off, c.n, c.err
}

// read reads the chunk at off into buf[room:], all of it or an error.
func (r *chunkReader) read(buf []byte, off int64) (int, error) {
	want := int(min(int64(r.size), r.end-off))
	n, err := readChunk(r.src, buf[r.room:r.room+want], off)
	if err == nil && n < want {
		err = retain.Errorf(retain.CodeCorrupt, "the value ends at byte %d, before its size %d; run retval verify", off+int64(n), r.end)
	}
	return n, err
}

// Close stops the readers ahead and waits for them.
func (r *chunkReader) Close() {
	if r.stop != nil {
		close(r.stop)
		r.wg.Wait()
		r.stop = nil
	}
}
