package retain

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// A zstd sink whose file write fails keeps every accepted byte for the
// verbatim fallback, whichever way Finish learns of the failure: the
// pipeline failed before the last frame was queued (the test waits for
// that), and that frame must still be read back. The file here is
// read-only, so the first frame write fails (as on a full disk).
func TestZstdSinkFailureReadsBackEverything(t *testing.T) {
	data := bigValue(2*FrameSize + 90000)
	dir := t.TempDir()
	for i := range 100 {
		p := filepath.Join(dir, "v")
		os.WriteFile(p, nil, 0o600)
		f, err := os.Open(p) // read-only: every write fails
		if err != nil {
			t.Fatal(err)
		}
		z := newZstdSink(f, nil)
		if n, err := z.Write(data[:2*FrameSize]); n != 2*FrameSize {
			t.Fatalf("write: %d, %v", n, err)
		}
		// The writer fails at its first frame and stops the pipeline: wait
		// for that, then queue the last frame behind its back.
		<-z.ctx.Done()
		z.Write(data[2*FrameSize:])
		if _, err := z.Finish(); err == nil {
			t.Fatal("finish on a read-only file succeeded")
		}
		var out bytes.Buffer
		if err := z.ReadBack(&out); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if !bytes.Equal(out.Bytes(), data) {
			t.Fatalf("trial %d: read back %d bytes of the %d accepted", i, out.Len(), len(data))
		}
	}
}
