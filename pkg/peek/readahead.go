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

// mappedSource is a source that can be mapped into memory
// (retain.Value.Map).
type mappedSource interface {
	Map() (*retain.Mapping, error)
}

// useMapping says whether searches map values that allow it (a variable
// so that tests can try both ways).
var useMapping = true

// chunk is one piece of a value read ahead: n bytes at off, in
// buf[room:room+n] (buf is nil for a mapped value).
type chunk struct {
	buf []byte
	off int64
	n   int
	err error
	// miss says the probe found nothing in the chunk and the room before
	// it: the consumer's search of it would find nothing either.
	miss bool
}

// chunkReader reads a value from start to end, size bytes at a time, and
// hands the chunks over in order, each with the end of the one before in
// front of it. A value that can be mapped is searched in place, its
// chunks checked against their digests ahead of the consumer by one
// goroutine per core; one whose blocks can be read concurrently is read
// into buffers by those goroutines; any other is read when asked. So a
// search through a large value is bound by the cores' speed rather than
// one core's, and by no copy at all where the value is mapped.
type chunkReader struct {
	src  source
	size int   // bytes a chunk holds
	room int   // the most bytes kept in front of a chunk
	end  int64 // the value's size
	next int64 // offset of the next chunk to hand over

	m *retain.Mapping // the mapped value, or nil
	// probe, when set, makes each reader of a mapped value search the
	// chunk it has just checked, while it is in that core's cache, for a
	// match of its own copy of the finder (see chunk.miss).
	probe  finder
	probes []finder

	// Read ahead: worker w reads chunks w, w+W, w+2W, … (into its own two
	// buffers, unless mapped) and delivers them on out[w]; free[w] takes
	// buffers back.
	out   []chan chunk
	free  []chan []byte
	stop  chan struct{}
	wg    sync.WaitGroup
	seq   []byte // the one buffer of a sequential reader
	prev  []byte // the bytes last handed over
	carry []byte // the end of them, kept for the next chunk
	back  []byte // the buffer to give back to its worker
	k     int    // index of the next chunk
}

// readAheadWorkers is how many goroutines read ahead: one per core, at
// most four (a variable so that tests can vary it).
var readAheadWorkers = func() int { return min(runtime.GOMAXPROCS(0), 4) }

func newChunkReader(src source, size, room int, probe finder) (*chunkReader, error) {
	r := &chunkReader{src: src, size: size, room: room, end: src.Size(), probe: probe}
	align := int64(0)
	if cs, ok := src.(concurrentSource); ok {
		align = cs.ConcurrentBlocks()
	}
	if align <= 0 || int64(size)%align != 0 {
		r.seq = make([]byte, room+size)
		return r, nil
	}
	if ms, ok := src.(mappedSource); ok && useMapping {
		m, err := ms.Map()
		if err != nil {
			return nil, err
		}
		r.m = m
	}
	w := readAheadWorkers()
	if r.m == nil && (w < 2 || r.end <= int64(size)) {
		r.seq = make([]byte, room+size)
		return r, nil
	}
	w = max(w, 1)
	r.stop = make(chan struct{})
	if r.m != nil && r.probe != nil {
		data := r.m.Data()
		_ = r.m.Guard(func() error { // the sample only picks what to look for
			r.probe.tune(data[:min(len(data), 256<<10)])
			return nil
		})
		for range w {
			r.probes = append(r.probes, r.probe.clone())
		}
	}
	for i := range w {
		out, free := make(chan chunk, 2), make(chan []byte, 2)
		if r.m == nil {
			free <- make([]byte, room+size)
			free <- make([]byte, room+size)
		}
		r.out, r.free = append(r.out, out), append(r.free, free)
		r.wg.Add(1)
		go r.work(i, w, out, free)
	}
	return r, nil
}

func (r *chunkReader) work(i, w int, out chan<- chunk, free <-chan []byte) {
	defer r.wg.Done()
	for k := int64(i); k*int64(r.size) < r.end; k += int64(w) {
		c := chunk{off: k * int64(r.size)}
		if r.m != nil {
			c.n = int(min(int64(r.size), r.end-c.off))
			c.err = r.m.Check(c.off, c.off+int64(c.n))
			if c.err == nil && r.probes != nil {
				f, data := r.probes[i], r.m.Data()
				c.err = r.m.Guard(func() error {
					f.reset()
					s, _ := f.find(data[max(0, c.off-int64(r.room)):c.off+int64(c.n)], 0)
					c.miss = s < 0
					return nil
				})
			}
		} else {
			select {
			case c.buf = <-free:
			case <-r.stop:
				return
			}
			c.n, c.err = r.read(c.buf, c.off)
		}
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

// Guard runs f, the consumer of the chunks, so that a fault reading a
// mapped value is an error (retain.Mapping.Guard).
func (r *chunkReader) Guard(f func() error) error {
	if r.m != nil {
		return r.m.Guard(f)
	}
	return f()
}

// Next returns the next chunk with the last keep bytes of the one before
// in front of it (keep is at most room), and where it starts; miss says
// the probe found no match in it. The bytes are the caller's until the
// next call. At the end it returns nil.
func (r *chunkReader) Next(keep int) (p []byte, pbase int64, miss bool, err error) {
	keep = min(keep, len(r.prev))
	if r.m == nil {
		r.carry = append(r.carry[:0], r.prev[len(r.prev)-keep:]...)
	}
	if r.back != nil {
		r.free[(r.k-1)%len(r.out)] <- r.back
		r.back = nil
	}
	if r.next >= r.end {
		r.prev = nil
		return nil, r.end, false, nil
	}
	var c chunk
	switch {
	case r.seq != nil:
		c = chunk{buf: r.seq, off: r.next}
		c.n, c.err = r.read(r.seq, r.next)
	default:
		c = <-r.out[r.k%len(r.out)]
		r.k++
		r.back = c.buf
	}
	if c.err != nil {
		return nil, c.off, false, c.err
	}
	r.next = c.off + int64(c.n)
	if r.m != nil {
		if r.k%8 == 0 {
			r.m.Release(c.off - int64(keep)) // every 8th chunk: one call per 8 MiB
		}
		p = r.m.Data()[c.off-int64(keep) : r.next]
	} else {
		copy(c.buf[r.room-keep:r.room], r.carry)
		p = c.buf[r.room-keep : r.room+c.n]
	}
	r.prev = p
	return p, c.off - int64(keep), c.miss, nil
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

// Close stops the readers ahead, waits for them and unmaps the value.
func (r *chunkReader) Close() {
	if r.stop != nil {
		close(r.stop)
		r.wg.Wait()
		r.stop = nil
	}
	if r.m != nil {
		r.m.Close()
		r.m = nil
	}
}
