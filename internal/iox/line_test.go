package iox

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// ReadLine reads what ReadBytes('\n') reads: short and long lines, the
// last without a newline, an empty input, and through a reader that
// returns one byte at a time.
func TestReadLine(t *testing.T) {
	long := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB: past any buffer
	for _, in := range []string{"", "a", "a\n", "a\nb", "a\n\nb\n", long, long + "\n" + long, "x\n" + long + "\ny"} {
		for _, wrap := range []func(io.Reader) io.Reader{func(r io.Reader) io.Reader { return r }, iotest.HalfReader, iotest.DataErrReader} {
			want := bufio.NewReaderSize(wrap(strings.NewReader(in)), 4096)
			got := bufio.NewReaderSize(wrap(strings.NewReader(in)), 4096)
			for i := 0; ; i++ {
				w, werr := want.ReadBytes('\n')
				g, gerr := ReadLine(got)
				if !bytes.Equal(g, w) || gerr != werr {
					t.Fatalf("input of %d bytes, line %d: got %d bytes, %v; want %d bytes, %v", len(in), i, len(g), gerr, len(w), werr)
				}
				if werr != nil {
					break
				}
			}
		}
	}
}

// ReadAll reads what io.ReadAll reads, up to max+1 bytes.
func TestReadAll(t *testing.T) {
	long := strings.Repeat("0123456789abcdef", 1<<16)
	for _, in := range []string{"", "a", "a\nb\n", long} {
		for _, max := range []int64{0, 1, 100, 1 << 30} {
			want, _ := io.ReadAll(io.LimitReader(strings.NewReader(in), max+1))
			got, err := ReadAll(iotest.HalfReader(strings.NewReader(in)), max)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("input of %d bytes, max %d: %d bytes, %v; want %d", len(in), max, len(got), err, len(want))
			}
		}
	}
}
