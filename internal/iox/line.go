package iox

import (
	"bufio"
	"bytes"
	"io"
)

// ReadLine reads up to and including the next '\n' (or to the end of
// the input) like br.ReadBytes('\n'), but a line longer than br's buffer
// costs its own size in memory at the peak, not twice it: ReadBytes keeps
// the pieces it read until it has joined them, and a 20 MB JSON-RPC frame
// then holds 40 MB. On Linux the pieces go to a mapping of the system's
// that is released page by page as the line is built (readLong); elsewhere
// ReadLine is ReadBytes.
func ReadLine(br *bufio.Reader) ([]byte, error) {
	chunk, err := br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return bytes.Clone(chunk), err
	}
	return readLong(br, chunk)
}

// readRest finishes a long line the way ReadBytes does, after the head
// already read.
func readRest(br *bufio.Reader, head []byte) ([]byte, error) {
	rest, err := br.ReadBytes('\n')
	return append(head, rest...), err
}

// ReadAll reads r to its end like io.ReadAll, at most max+1 bytes, and
// like ReadLine costs the input's own size at the peak: io.ReadAll grows
// its slice by copying, and a 16 MiB hook input then briefly holds two.
func ReadAll(r io.Reader, max int64) ([]byte, error) {
	return readAll(io.LimitReader(r, max+1))
}
