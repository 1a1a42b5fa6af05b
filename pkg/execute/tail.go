package execute

import (
	"bytes"
	"io"
)

// tail keeps the last n bytes written to it, in a ring of n bytes.
type tail struct {
	buf  []byte
	n    int
	full bool
	at   int // where the next byte goes
}

func newTail(n int64) *tail { return &tail{n: int(n)} }

func (t *tail) Write(p []byte) (int, error) {
	written := len(p)
	if len(p) >= t.n {
		// Only the last n bytes of p can stay.
		t.buf = append(t.buf[:0], p[len(p)-t.n:]...)
		t.at, t.full = 0, true
		return written, nil
	}
	if !t.full {
		room := t.n - len(t.buf)
		if len(p) <= room {
			t.buf = append(t.buf, p...)
			t.at = len(t.buf) % t.n
			t.full = len(t.buf) == t.n
			return written, nil
		}
		t.buf = append(t.buf, p[:room]...)
		p = p[room:]
		t.at, t.full = 0, true
	}
	for len(p) > 0 {
		k := copy(t.buf[t.at:], p)
		p = p[k:]
		t.at = (t.at + k) % t.n
	}
	return written, nil
}

// Len is how many bytes are kept.
func (t *tail) Len() int64 { return int64(len(t.buf)) }

// Reader reads the bytes kept, oldest first.
func (t *tail) Reader() io.Reader {
	if !t.full {
		return bytes.NewReader(t.buf)
	}
	return io.MultiReader(bytes.NewReader(t.buf[t.at:]), bytes.NewReader(t.buf[:t.at]))
}
