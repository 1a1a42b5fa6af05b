package object

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/retval/retval/pkg/retain/s3store"
)

// objReaderAt reads an object's bytes by ranged GETs, a window of
// ReadWindow bytes at a time, keeping the last window: a reader that
// walks a value block by block costs one GET per window, not per block.
// A reader that walks window after window (a pointer or an outline
// scanning a document, a zstd value decoded frame by frame) gets the next
// readAhead windows fetched at once while it works on this one: on a
// server each GET is a round trip, and they need not wait for each other.
type objReaderAt struct {
	o    *Backend
	key  string
	size int64
	// gone, when set, is the error of a read that found the object
	// deleted (ErrNotFound) instead of the store's I/O error.
	gone func(error) error

	mu    sync.Mutex
	cur   *window           // the window being read, or nil
	last  int64             // the number of the window read before, or -1
	ahead map[int64]*window // windows being fetched ahead
	free  [][]byte
}

// window is bytes [n*ReadWindow, …) of the object, once done is closed.
type window struct {
	n    int64
	done chan struct{}
	buf  []byte
	err  error
}

const (
	ReadWindow = 1 << 20
	readAhead  = 4 // windows fetched ahead of a sequential reader
)

func newObjReaderAt(o *Backend, key string, size int64) *objReaderAt {
	return &objReaderAt{o: o, key: key, size: size, last: -1}
}

func (r *objReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= r.size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	if len(p) >= ReadWindow/2 {
		// A large read (a search's chunk): straight into p.
		want := min(int64(len(p)), r.size-off)
		n, err := r.o.b.ReadAt(r.o.ctx, r.key, p[:want], off)
		if err == nil && int64(n) < int64(len(p)) {
			err = io.EOF
		}
		if err != nil && err != io.EOF {
			err = r.failed(err)
		}
		return n, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for n < len(p) && off < r.size {
		w, err := r.window(off / ReadWindow)
		if err != nil {
			return n, err
		}
		k := copy(p[n:], w.buf[off-w.n*ReadWindow:])
		n += k
		off += int64(k)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// window returns window n, fetched; the caller holds r.mu.
func (r *objReaderAt) window(n int64) (*window, error) {
	if r.cur != nil && r.cur.n == n {
		return r.cur, nil
	}
	w := r.ahead[n]
	if w == nil {
		w = r.fetch(n)
	}
	delete(r.ahead, n)
	<-w.done
	if r.cur != nil && r.cur.err == nil {
		r.free = append(r.free, r.cur.buf[:0])
	}
	r.cur = w
	if w.err != nil {
		r.cur = nil
		return nil, w.err
	}
	// Windows a reader that jumped elsewhere will not read are let go
	// (their GETs finish on their own).
	for k := range r.ahead {
		if k < n || k > n+readAhead {
			delete(r.ahead, k)
		}
	}
	if n == r.last+1 {
		for k := n + 1; k <= n+readAhead && k*ReadWindow < r.size; k++ {
			if r.ahead[k] == nil {
				if r.ahead == nil {
					r.ahead = map[int64]*window{}
				}
				r.ahead[k] = r.fetch(k)
			}
		}
	}
	r.last = n
	return w, nil
}

// failed is the error of a read of the object that failed with err.
func (r *objReaderAt) failed(err error) error {
	if r.gone != nil && errors.Is(err, s3store.ErrNotFound) {
		return r.gone(r.o.ioErr(err))
	}
	return r.o.ioErr(err)
}

// fetch starts reading window n on its own goroutine.
func (r *objReaderAt) fetch(n int64) *window {
	w := &window{n: n, done: make(chan struct{})}
	var buf []byte
	if k := len(r.free); k > 0 {
		buf, r.free = r.free[k-1], r.free[:k-1]
	} else {
		buf = make([]byte, 0, ReadWindow)
	}
	start := n * ReadWindow
	end := min(start+ReadWindow, r.size)
	go func() {
		defer close(w.done)
		b := buf[:end-start]
		k, err := r.o.b.ReadAt(r.o.ctx, r.key, b, start)
		if int64(k) < end-start {
			if err == nil || err == io.EOF {
				err = fmt.Errorf("object %s ended at %d bytes, %d expected", r.key, start+int64(k), r.size)
			}
			w.err = r.failed(err)
			return
		}
		w.buf = b
	}()
	return w
}
